import { explain, type Vocabulary } from './explain.js';

const vocabulary: Vocabulary = {
  codes: {
    password_change_required: { title: 'Change your password first.' },
    upstream_failed: { title: 'The upstream failed.', hint: 'Tell the provider.' },
  },
  statuses: { 403: { title: 'Your role does not allow this.' } },
};

describe('explain', () => {
  it("gives the app's words for a code, keeping the server's as detail", () => {
    expect(
      explain(
        { code: 'upstream_failed', message: 'connect ECONNREFUSED', address: 'https://x.example' },
        vocabulary,
      ),
    ).toEqual({
      title: 'The upstream failed.',
      hint: 'Tell the provider.',
      address: 'https://x.example',
      detail: 'connect ECONNREFUSED',
    });
  });

  it('explains by status only when the code has no words of its own', () => {
    expect(explain({ status: 403, code: 'forbidden', message: 'No' }, vocabulary).title).toBe(
      'Your role does not allow this.',
    );
    expect(
      explain({ status: 403, code: 'password_change_required', message: 'x' }, vocabulary).title,
    ).toBe('Change your password first.');
  });

  it("says the server's message for what it does not know, with the fields", () => {
    const fields = [{ field: 'name', message: 'name is required' }];
    expect(explain({ code: 'brand_new', message: 'New', fields }, vocabulary)).toEqual({
      title: 'New',
      fields,
    });
    expect(explain(new Error(''), vocabulary).title).toBe('Something went wrong.');
  });
});
