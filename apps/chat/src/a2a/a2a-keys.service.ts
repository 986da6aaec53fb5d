import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type A2aKey } from '@switchyard/db';
import { generateA2aKey, lastFour, sha256Hex } from '@switchyard/security';
import { wholeList } from '@switchyard/service';
import { type Principal } from '../auth/principal.js';
import { toPrincipal } from '../users/users.mapper.js';
import {
  type A2aKeyPageResponse,
  type A2aKeyResponse,
  type CreateA2aKeyDto,
  type CreatedA2aKeyResponse,
} from './a2a-keys.dto.js';
import { A2aKeysRepository } from './a2a-keys.repository.js';

// Per-user A2A keys (docs/tools.md, A2A): the key is shown once when it is made; only its
// SHA-256 is stored, like gateway tokens. Another agent sends it as a bearer credential
// and acts as the key's user.

/** Why an A2A request was refused; the endpoint answers it as a JSON-RPC error. */
export class A2aAuthError extends Error {
  constructor(
    readonly reason: 'missing_key' | 'invalid_key' | 'key_revoked' | 'user_disabled',
    message: string,
  ) {
    super(message);
    this.name = 'A2aAuthError';
  }
}

function toResponse(key: A2aKey): A2aKeyResponse {
  return {
    id: key.id,
    name: key.name,
    lastFour: key.lastFour,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    createdAt: key.createdAt.toISOString(),
  };
}

@Injectable()
export class A2aKeysService {
  private readonly logger = new Logger(A2aKeysService.name);

  constructor(private readonly keys: A2aKeysRepository) {}

  async create(principal: Principal, dto: CreateA2aKeyDto): Promise<CreatedA2aKeyResponse> {
    const key = generateA2aKey();
    const row = await this.keys.create({
      userId: principal.id,
      name: dto.name,
      keyHash: sha256Hex(key),
      lastFour: lastFour(key),
    });
    this.logger.log({ message: 'A2A key created', keyId: row.id, userId: principal.id });
    return { ...toResponse(row), key };
  }

  async list(principal: Principal): Promise<A2aKeyPageResponse> {
    return wholeList((await this.keys.listOwned(principal.id)).map(toResponse));
  }

  async revoke(principal: Principal, id: number): Promise<A2aKeyResponse> {
    const key = await this.keys.revokeOwned(id, principal.id);
    if (!key) throw new ApiError('not_found', `You have no A2A key with id ${id}`);
    this.logger.log({ message: 'A2A key revoked', keyId: id, userId: principal.id });
    return toResponse(key);
  }

  /** The user a bearer A2A key acts for; throws A2aAuthError. */
  async authenticate(authorization: string | undefined): Promise<Principal> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!match) {
      throw new A2aAuthError('missing_key', 'Send an A2A key as "Authorization: Bearer a2a-…"');
    }
    const keyHash = sha256Hex(match[1]!);
    const key = await this.keys.findByHash(keyHash);
    if (!key) throw new A2aAuthError('invalid_key', 'This A2A key is not valid');
    if (key.revokedAt) {
      throw new A2aAuthError(
        'key_revoked',
        `This A2A key was revoked on ${key.revokedAt.toISOString()}`,
      );
    }
    if (key.user.disabled) {
      throw new A2aAuthError('user_disabled', "The A2A key's account is disabled");
    }
    await this.keys.touch(key.id);
    return toPrincipal(key.user, keyHash);
  }
}
