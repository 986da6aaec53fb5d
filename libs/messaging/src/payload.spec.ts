import { ReportedUsage, UsageRecord } from '@switchyard/contracts';
import {
  IsInt,
  ValidateNested,
  ValidatorConstraint,
  Validate,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { InvalidPayloadError, payloadValidator, validatePayload } from './payload.js';

// payloadValidator must judge every payload exactly as validatePayload (class-transformer
// and class-validator at each call) does: same verdict, same fields named.

function validRecord(): Record<string, unknown> {
  return {
    requestId: 'req-1',
    tokenId: 1,
    channelId: 2,
    keyId: null,
    endpoint: 'chat.completions',
    model: 'gpt-4o',
    upstreamModel: null,
    stream: true,
    status: 200,
    errorCode: null,
    usage: { promptTokens: 10, completionTokens: 5, cachedTokens: 2 },
    promptText: 'hello',
    imageCount: 1,
    latencyMs: 12,
    firstByteMs: 3,
    attempts: 1,
    clientIp: '10.0.0.1',
    requestedAt: 1_700_000_000_000,
  };
}

const ODD_VALUES: unknown[] = [
  undefined,
  null,
  '',
  'text',
  '12',
  'a'.repeat(65),
  'a'.repeat(129),
  -1,
  0,
  1.5,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  [],
  [1],
  [{ promptTokens: 1, completionTokens: 1 }],
  {},
  { promptTokens: 1 },
  'chat.completions',
  'images.generations',
];

function verdict(validate: (data: unknown) => unknown, data: unknown): string {
  try {
    validate(data);
    return 'valid';
  } catch (error) {
    if (error instanceof InvalidPayloadError) return error.message;
    throw error;
  }
}

describe('payloadValidator', () => {
  const compiled = payloadValidator(UsageRecord);
  const reference = (data: unknown) => validatePayload(UsageRecord, data);

  it('accepts a valid usage record and returns it as it is', () => {
    const record = validRecord();
    expect(compiled(record)).toBe(record);
  });

  it('judges every odd value of every field, nested ones included, as validatePayload does', () => {
    const cases: Record<string, unknown>[] = [];
    for (const field of Object.keys(validRecord())) {
      for (const value of ODD_VALUES) {
        const record = validRecord();
        if (value === undefined) delete record[field];
        else record[field] = value;
        cases.push(record);
      }
    }
    for (const field of ['promptTokens', 'completionTokens', 'cachedTokens']) {
      for (const value of ODD_VALUES) {
        const record = validRecord();
        const usage = record.usage as Record<string, unknown>;
        if (value === undefined) delete usage[field];
        else usage[field] = value;
        cases.push(record);
      }
    }
    cases.push({ ...validRecord(), unknownField: 'kept' }, {}, { usage: 'x', tokenId: 'y' });

    let invalid = 0;
    for (const record of cases) {
      const expected = verdict(reference, structuredClone(record));
      expect({ record, verdict: verdict(compiled, record) }).toEqual({ record, verdict: expected });
      if (expected !== 'valid') invalid += 1;
    }
    // The cases exercise both verdicts, and several fields at once.
    expect(invalid).toBeGreaterThan(cases.length / 2);
    expect(verdict(compiled, { usage: 'x', tokenId: 'y' })).toContain('tokenId');
  });

  it('refuses what is not an object, arrays included (validatePayload let an array through)', () => {
    for (const data of [null, undefined, 'text', 3, [validRecord()]]) {
      expect(() => compiled(data)).toThrow('expected an object for UsageRecord');
    }
  });

  it('validates a nested class with its own rules', () => {
    expect(() =>
      payloadValidator(ReportedUsage)({ promptTokens: -1, completionTokens: 1 }),
    ).toThrow('ReportedUsage has invalid fields: promptTokens');
  });

  it('is refused for rules it cannot apply as class-validator would', () => {
    @ValidatorConstraint({ async: true })
    class Remote implements ValidatorConstraintInterface {
      validate(): Promise<boolean> {
        return Promise.resolve(true);
      }
    }
    class AsynchronousRule {
      @Validate(Remote) name!: string;
    }
    class Inner {
      @IsInt() n!: number;
    }
    class NestedWithoutType {
      @ValidateNested() inner!: Inner;
    }
    class NoRules {
      name!: string;
    }
    expect(() => payloadValidator(AsynchronousRule)).toThrow('asynchronous constraints');
    expect(() => payloadValidator(NestedWithoutType)).toThrow('needs class-transformer');
    expect(() => payloadValidator(NoRules)).toThrow('no validation rules');
  });
});
