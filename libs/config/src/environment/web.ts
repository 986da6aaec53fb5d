import {
  IntegerVariable,
  ListVariable,
  PortVariable,
  TextVariable,
  UrlVariable,
} from '../variables.js';
import { BaseEnv, CIDR } from './base.js';

export class WebEnv extends BaseEnv {
  @PortVariable()
  WEB_PORT: number = 8080;

  /** `/metrics` (and probes) only, never exposed publicly (docs/architecture.md, "Operations ports"). */
  @PortVariable()
  WEB_OPS_PORT: number = 8081;

  @UrlVariable(['http', 'https'])
  CHAT_URL: string = 'http://127.0.0.1:3002';

  /**
   * Proxies in front of the web front whose X-Forwarded-For/-Proto/-Host are believed;
   * anyone else's are replaced by what the web front itself saw.
   */
  @ListVariable(CIDR, 'IP addresses or CIDRs')
  TRUSTED_PROXIES: string[] = ['127.0.0.1/32', '::1/128'];

  /** The built single-page app; unset: `public/` beside the app's `main.js`. */
  @TextVariable({ optional: true, expects: 'a directory path' })
  WEB_STATIC_DIR?: string;

  /**
   * Where the chat app may show generated images and sounds from, besides itself: the
   * upstreams' media hosts, as origins (`https://files.example.com`, `http://127.0.0.1:18080`)
   * or `https:` for any HTTPS host (the default: providers keep generated files on hosts of
   * their own). Goes into the page's content security policy.
   */
  @ListVariable(
    /^(https:|https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?)$/,
    '`https:` or origins (http(s)://host[:port])',
  )
  WEB_MEDIA_SOURCES: string[] = ['https:'];

  /**
   * No response headers from the chat backend within this time: HTTP 502
   * (docs/specification.md, "Reverse proxy").
   */
  @IntegerVariable(1000, 3_600_000)
  CHAT_HEADERS_TIMEOUT_MS: number = 300_000;

  /** Silence between two chunks of a proxied body after which it is cut. */
  @IntegerVariable(1000, 3_600_000)
  CHAT_IDLE_TIMEOUT_MS: number = 300_000;
}
