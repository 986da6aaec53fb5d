import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ChannelClient, type ChannelCall, type ChannelResponse } from '@switchyard/providers';

// The edge's upstream HTTP: libs/providers' channel client (one keep-alive pool per upstream
// origin, the first-byte and idle timeouts that decide failover), closed with the app.

export { ChannelUnreachable as UpstreamUnreachable } from '@switchyard/providers';

export interface UpstreamTimeouts {
  firstByteMs: number;
  idleMs: number;
}

/** Every call the edge makes forwards a client's request, so it carries its signal and id. */
export interface UpstreamCall extends ChannelCall {
  /** Absent only for a follow-up that sends none (a stored Response's read or delete). */
  body?: Buffer;
  requestId: string;
  signal: AbortSignal;
}

export type UpstreamResponse = ChannelResponse;

@Injectable()
export class UpstreamClient implements OnApplicationShutdown {
  private readonly client: ChannelClient;

  constructor(readonly timeouts: UpstreamTimeouts) {
    this.client = new ChannelClient({ ...timeouts, userAgent: 'switchyard-gateway' });
  }

  send(call: UpstreamCall): Promise<UpstreamResponse> {
    return this.client.send(call);
  }

  onApplicationShutdown(): Promise<void> {
    return this.client.close();
  }
}
