import { Inject, Injectable, Logger } from '@nestjs/common';
import { withRedis } from '@switchyard/auth';
import { ApiError } from '@switchyard/contracts';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { registerSecret } from '@switchyard/observability';
import { SecretCipher } from '@switchyard/security';
import { type PurposeName } from '../common/platform.js';
import { EditionsService } from '../editions/editions.service.js';
import { type UpstreamTarget } from '../upstream/upstream-target.js';
import { ApiKeysRepository } from './api-keys.repository.js';

// Round-robin over the enabled records of a purpose (docs/specification.md, "Chat upstream
// records"): a counter per purpose in Redis, shared by every chat instance, picks the
// record to start with; the others follow in order, each at most once, for when the first
// fails.

const counterKey = (purpose: PurposeName) => `chat:rr:${purpose}`;

@Injectable()
export class RecordRotation {
  private readonly logger = new Logger(RecordRotation.name);

  constructor(
    private readonly records: ApiKeysRepository,
    private readonly editions: EditionsService,
    private readonly cipher: SecretCipher,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  /**
   * The records to try for one request, in order. Throws 503 `no_api_key` when the purpose
   * has no enabled record, 403 `address_not_whitelisted` when the edition allows none.
   */
  async next(purpose: PurposeName): Promise<UpstreamTarget[]> {
    const enabled = await this.records.listEnabled(purpose);
    if (enabled.length === 0) {
      throw new ApiError(
        'no_api_key',
        `No enabled API key record has the purpose "${purpose}": an administrator must add one ` +
          `(menu API-KEY, purpose ${purpose}) before ${purpose} models can be used`,
      );
    }
    const allowed = await this.editions.addressPolicy();
    const usable = enabled.filter((record) => allowed(record.address));
    if (usable.length === 0) await this.editions.assertAddressAllowed(enabled[0]!.address);

    const turn = await withRedis('Choosing an API key record', () =>
      this.redis.incr(counterKey(purpose)),
    );
    const start = (turn - 1) % usable.length;
    const targets: UpstreamTarget[] = [];
    for (const record of [...usable.slice(start), ...usable.slice(0, start)]) {
      try {
        const apiKey = this.cipher.open(record.keyCiphertext);
        // An upstream's error may quote the key: every redaction of this process removes it.
        registerSecret(apiKey);
        targets.push({ recordId: record.id, address: record.address, apiKey });
      } catch (error) {
        this.logger.error({
          message: 'an API key record cannot be decrypted: check SECRET_KEYS',
          recordId: record.id,
          reason: (error as Error).message,
        });
      }
    }
    if (targets.length === 0) {
      throw new ApiError(
        'no_api_key',
        `No API key record with the purpose "${purpose}" can be used: their keys cannot be decrypted`,
      );
    }
    return targets;
  }
}
