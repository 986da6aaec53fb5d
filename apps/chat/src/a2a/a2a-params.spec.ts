import { type Logger } from '@nestjs/common';
import { withoutInternals } from './a2a-endpoint.service.js';
import { invalidParams } from './a2a-params.js';

describe('A2A errors as the client sees them', () => {
  it('gives an internal error the generic message only', () => {
    const logged: string[] = [];
    const logger = { error: (line: string) => void logged.push(line) } as unknown as Logger;
    const cause = new TypeError('taskId.trim is not a function');
    expect(
      withoutInternals(
        { code: -32603, message: cause.message, data: { stack: 'x' } },
        cause,
        logger,
      ),
    ).toEqual({ code: -32603, message: 'Internal error' });
    expect(logged.join('\n')).toContain('taskId.trim is not a function');
    // Other errors say what the client got wrong, as the SDK put it.
    const notFound = { code: -32001, message: 'Task not found: x' };
    expect(withoutInternals(notFound, undefined, logger)).toBe(notFound);
  });

  it('leaves well-typed params and unknown methods to the SDK', () => {
    expect(invalidParams({ method: 'tasks/get', params: { id: 'x' } })).toBeNull();
    expect(invalidParams({ method: 'GetExtendedAgentCard' })).toBeNull();
    expect(invalidParams({ method: 'no/such', params: 1 })).toBeNull();
  });
});
