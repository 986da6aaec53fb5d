import { asProblem, fieldErrors, networkProblem, problem, problemFrom } from './problem.js';

describe('problemFrom', () => {
  it("reads the API's error body with its fields and address", () => {
    const read = problemFrom(
      400,
      {
        error: {
          code: 'validation_failed',
          message: 'Invalid',
          fields: [{ field: 'name', message: 'name is required' }, { field: 3 }],
          address: 'https://relay.example.com',
        },
      },
      'fallback',
    );
    expect(read).toBeInstanceOf(Error);
    expect(asProblem(read)).toMatchObject({
      status: 400,
      code: 'validation_failed',
      message: 'Invalid',
      fields: [{ field: 'name', message: 'name is required' }],
      address: 'https://relay.example.com',
    });
  });

  it("reads a streamed error event's data, which is the error itself", () => {
    expect(problemFrom(502, { code: 'upstream_failed' }, 'The reply failed')).toMatchObject({
      code: 'upstream_failed',
      message: 'The reply failed',
    });
  });

  it('says the fallback for a body without a code, a 502 still being bad_gateway', () => {
    expect(problemFrom(502, '<html>', 'The server answered 502')).toMatchObject({
      status: 502,
      code: 'bad_gateway',
      message: 'The server answered 502',
    });
    expect(problemFrom(500, null, 'The server answered 500')).toMatchObject({
      code: 'http_500',
    });
  });
});

describe('asProblem', () => {
  it('keeps problems as they are and turns anything else into client_error', () => {
    const thrown = problem({ code: 'forbidden', message: 'No' });
    expect(asProblem(thrown)).toBe(thrown);
    expect(asProblem(new Error('boom'))).toEqual({ code: 'client_error', message: 'boom' });
    expect(asProblem('odd')).toEqual({ code: 'client_error', message: 'odd' });
  });
});

describe('networkProblem', () => {
  it("says the browser's words unless the app has its own", () => {
    expect(networkProblem(new TypeError('Failed to fetch'))).toMatchObject({
      status: 0,
      code: 'network_error',
      message: 'Failed to fetch',
    });
    expect(networkProblem(new TypeError('x'), 'Unreachable.').message).toBe('Unreachable.');
  });
});

describe('fieldErrors', () => {
  it('keeps the first message of each field', () => {
    const fields = [
      { field: 'name', message: 'first' },
      { field: 'name', message: 'second' },
      { field: 'url', message: 'bad' },
    ];
    expect(fieldErrors({ code: 'validation_failed', message: '', fields })).toEqual({
      name: 'first',
      url: 'bad',
    });
    expect(fieldErrors(null)).toEqual({});
  });
});
