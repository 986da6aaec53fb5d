import { Injectable } from '@nestjs/common';
import { GatewayError } from '@switchyard/contracts';
import { allowedByList } from '@switchyard/domain';
import { sha256Hex } from '@switchyard/security';
import { TokenDirectory, type GatewayToken } from './token-directory.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** A connection's last bearer token, and its hash. */
interface HashedBearer {
  bearer: string;
  hash: string;
}

function masked(value: string): string {
  return value.length <= 8 ? '****' : `${value.slice(0, 3)}...${value.slice(-4)}`;
}

/** Who is calling, and whether they may: docs/specification.md, "Tokens". */
@Injectable()
export class TokenAuthenticator {
  /**
   * A client's keep-alive connection sends the same token request after request: it is
   * hashed once a connection, not once a request (docs/performance.md, "A token hashed once
   * a connection"). Keyed by the connection, so a token is kept no longer than the socket
   * that carried it (and whose buffers held it anyway).
   */
  private readonly hashedOn = new WeakMap<object, HashedBearer>();

  constructor(private readonly directory: TokenDirectory) {}

  async authenticate(
    authorization: string | undefined,
    clientIp: string,
    now = Date.now(),
    /** The connection the request came on (its socket), when the caller knows it. */
    connection?: object,
  ): Promise<GatewayToken> {
    const bearer = authorization ? BEARER.exec(authorization)?.[1] : undefined;
    if (!bearer) {
      throw new GatewayError(
        'invalid_api_key',
        "You didn't provide an API key. Provide your gateway token in an Authorization header using Bearer auth (Authorization: Bearer YOUR_TOKEN).",
      );
    }
    const token = await this.directory.find(this.hashOf(bearer, connection), now);
    if (!token) {
      throw new GatewayError(
        'invalid_api_key',
        `Incorrect API key provided: ${masked(bearer)}. This gateway did not issue it; use the token with the gateway that issued it.`,
      );
    }
    if (token.status === 'disabled')
      throw new GatewayError('token_disabled', 'This token has been disabled by an administrator.');
    if (token.expiresAt !== null && token.expiresAt <= now) {
      throw new GatewayError(
        'token_expired',
        `This token expired on ${new Date(token.expiresAt).toISOString()}.`,
      );
    }
    if (token.exhausted) {
      throw new GatewayError(
        'insufficient_quota',
        'This token has used all of its quota. Ask an administrator to raise it.',
      );
    }
    if (
      token.allowIps &&
      !token.allowIps.check(clientIp, clientIp.includes(':') ? 'ipv6' : 'ipv4')
    ) {
      throw new GatewayError(
        'ip_not_allowed',
        `Requests from ${clientIp} are not allowed for this token.`,
      );
    }
    return token;
  }

  private hashOf(bearer: string, connection: object | undefined): string {
    if (!connection) return sha256Hex(bearer);
    const last = this.hashedOn.get(connection);
    if (last?.bearer === bearer) return last.hash;
    const hash = sha256Hex(bearer);
    this.hashedOn.set(connection, { bearer, hash });
    return hash;
  }

  authorizeModel(token: GatewayToken, model: string): void {
    if (!allowedByList(token.models, model)) {
      throw new GatewayError(
        'model_not_allowed',
        `This token may not use the model \`${model}\`.`,
        'model',
      );
    }
  }
}
