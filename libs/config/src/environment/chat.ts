import {
  IntegerVariable,
  ListVariable,
  OneOfVariable,
  PortVariable,
  TextVariable,
} from '../variables.js';
import { CIDR } from './base.js';
import { LoginThrottleEnv } from './login-throttle.js';

export class ChatEnv extends LoginThrottleEnv {
  @PortVariable()
  CHAT_PORT: number = 3002;

  /** `/metrics` (and probes) only, never exposed publicly (docs/architecture.md, "Operations ports"). */
  @PortVariable()
  CHAT_OPS_PORT: number = 3012;

  @TextVariable({
    optional: true,
    pattern: /^[A-Za-z0-9_.-]{3,64}$/,
    expects: '3 to 64 letters, digits, _ . or -',
  })
  CHAT_ADMIN_USERNAME?: string;

  @TextVariable({ optional: true, pattern: /^.{8,256}$/, expects: 'at least 8 characters' })
  CHAT_ADMIN_PASSWORD?: string;

  @IntegerVariable(60, 30 * 86_400)
  SESSION_TTL_SECONDS: number = 7 * 86_400;

  @OneOfVariable(['community', 'plus'])
  EDITION: string = 'community';

  /** Plus edition: the relay base URLs an API key record may use without a license. */
  @ListVariable(/^https?:\/\/\S+$/, 'http(s) URLs')
  RECOMMENDED_RELAYS: string[] = [];

  /** Ed25519 public key (PEM or base64 SPKI) that signs licenses. */
  @TextVariable({ optional: true })
  LICENSE_PUBLIC_KEY?: string;

  @IntegerVariable(1000, 600_000)
  CHAT_UPSTREAM_TIMEOUT_MS: number = 120_000;

  /**
   * Model names of custom assistants: this prefix followed by the `g-…` id
   * (docs/specification.md, "Model access").
   */
  @TextVariable({
    pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/,
    expects: 'a model-name prefix of letters, digits, . _ or - (at most 64)',
  })
  CUSTOM_ASSISTANT_PREFIX: string = 'gpt-4-gizmo-';

  /** Earlier messages of a conversation sent to the upstream with each new one. */
  @IntegerVariable(0, 500)
  CHAT_HISTORY_MESSAGES: number = 40;

  /** How long one MCP tool call or resource read may take (docs/tools.md). */
  @IntegerVariable(100, 600_000)
  CHAT_TOOL_TIMEOUT_MS: number = 30_000;

  /**
   * The chat model that answers A2A tasks (docs/tools.md, A2A); unset, the A2A endpoint
   * refuses every task.
   */
  @TextVariable({ optional: true, pattern: /^.{1,128}$/, expects: 'a chat model name' })
  CHAT_A2A_MODEL?: string;

  /** How long a task delegated to a remote A2A agent may take, start to end. */
  @IntegerVariable(1000, 3_600_000)
  CHAT_A2A_DELEGATE_TIMEOUT_MS: number = 300_000;

  /**
   * How long a reply's frozen credits may stay unsettled before the sweeper returns them
   * (docs/credits.md, "Freeze and settle"): longer than any reply can run, tool calls and
   * delegated tasks included.
   */
  @IntegerVariable(60_000, 7 * 86_400_000)
  CHAT_CREDIT_HOLD_MAX_MS: number = 3_600_000;

  /** Chat's own: its many users share client addresses (offices, carrier NAT) more than administrators do. */
  override LOGIN_MAX_FAILURES_PER_IP: number = 50;

  /**
   * Proxies (the web app) whose X-Forwarded-For names the client, for login throttling, and
   * whose X-Forwarded-Proto/-Host name the origin of the agent card; anyone else's are
   * ignored.
   */
  @ListVariable(CIDR, 'IP addresses or CIDRs')
  TRUSTED_PROXIES: string[] = ['127.0.0.1/32', '::1/128'];
}
