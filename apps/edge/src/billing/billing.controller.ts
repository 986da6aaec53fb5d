import { Controller, Get, Inject, Req } from '@nestjs/common';
import { GatewayError } from '@switchyard/contracts';
import { sha256Hex } from '@switchyard/security';
import { type FastifyRequest } from 'fastify';
import { TokenDirectory, type GatewayToken } from '../auth/token-directory.js';
import { BillingRepository } from './billing.repository.js';
import {
  keyBilling,
  keyInfoOf,
  spendQuery,
  subscriptionOf,
  usageOf,
  type KeyBilling,
} from './key-billing.js';

// A key reads its own spending (docs/specification.md, "A key's own spending"):
// one-api's two billing routes, which chat clients (ChatGPT-Next-Web, LobeChat, …) call to
// show a key's balance, and a key-info route in the spirit of LiteLLM's `/key/info`. Each
// answers the token that asks about itself only, never about another.

export const BUDGET_TIME_ZONE = Symbol('BUDGET_TIME_ZONE');

const BEARER = /^Bearer\s+(\S+)\s*$/i;

@Controller('v1')
export class BillingController {
  constructor(
    private readonly directory: TokenDirectory,
    private readonly repository: BillingRepository,
    @Inject(BUDGET_TIME_ZONE) private readonly zone: string,
  ) {}

  @Get('dashboard/billing/subscription')
  async subscription(@Req() request: FastifyRequest): Promise<Record<string, unknown>> {
    return subscriptionOf(await this.billingOf(request));
  }

  /** one-api's answer whatever `start_date` and `end_date` say: the key's lifetime spend. */
  @Get('dashboard/billing/usage')
  async usage(@Req() request: FastifyRequest): Promise<Record<string, unknown>> {
    return usageOf(await this.billingOf(request));
  }

  @Get('key/info')
  async keyInfo(@Req() request: FastifyRequest): Promise<Record<string, unknown>> {
    return keyInfoOf(await this.billingOf(request));
  }

  private async billingOf(request: FastifyRequest): Promise<KeyBilling> {
    const now = new Date();
    const token = await this.caller(request, now.getTime());
    const key = await this.repository.key(token.id);
    if (!key) throw unknownKey();
    // The budgets the directory holds for the token are the ones its requests are refused
    // at: kept a minute at most and forgotten at once on `budget.changed` and `team.changed`
    // (docs/budgets.md, "Reservations": what the edge caches), so the key is told the limits that apply
    // to it now. What they spent is read fresh: the directory does not keep it.
    const budgets = token.budgets;
    const spends = await this.repository.spends(
      budgets.map((b) => b.subject),
      spendQuery(budgets, now, this.zone),
    );
    return keyBilling(key, budgets, spends, now, this.zone);
  }

  /**
   * The token asking, checked as the proxy checks it except for its quota: a key whose
   * quota is spent may still read that it is.
   */
  private async caller(request: FastifyRequest, now: number): Promise<GatewayToken> {
    const authorization = request.headers.authorization;
    const bearer = authorization ? BEARER.exec(authorization)?.[1] : undefined;
    if (!bearer)
      throw new GatewayError(
        'invalid_api_key',
        "You didn't provide an API key. Provide your gateway token in an Authorization header using Bearer auth (Authorization: Bearer YOUR_TOKEN).",
      );
    const token = await this.directory.find(sha256Hex(bearer), now);
    if (!token) throw unknownKey();
    if (token.status === 'disabled')
      throw new GatewayError('token_disabled', 'This token has been disabled by an administrator.');
    if (token.expiresAt !== null && token.expiresAt <= now)
      throw new GatewayError(
        'token_expired',
        `This token expired on ${new Date(token.expiresAt).toISOString()}.`,
      );
    const ip = request.ip;
    if (token.allowIps && !token.allowIps.check(ip, ip.includes(':') ? 'ipv6' : 'ipv4'))
      throw new GatewayError(
        'ip_not_allowed',
        `Requests from ${ip} are not allowed for this token.`,
      );
    return token;
  }
}

function unknownKey(): GatewayError {
  return new GatewayError(
    'invalid_api_key',
    'Incorrect API key provided. This gateway did not issue it; use the token with the gateway that issued it.',
  );
}
