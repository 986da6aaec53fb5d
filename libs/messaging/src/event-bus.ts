import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventPattern, MessagePattern } from '@nestjs/microservices';
import {
  EVENT_PAYLOADS,
  MESSAGE_REQUESTS,
  type EventName,
  type EventPayload,
  type MessageName,
  type MessageReply,
  type MessageRequest,
} from '@switchyard/contracts';
import { lastValueFrom, timeout } from 'rxjs';
import { payloadValidator } from './payload.js';
import { type NamespacedRedisClient } from './transport.js';

export const BUS_CLIENT = Symbol('BUS_CLIENT');

/** Publishes the events and sends the requests declared in `@switchyard/contracts`, and only those. */
@Injectable()
export class EventBus {
  /** Cancels each request still waiting for its reply; see `close()`. */
  private readonly pending = new Set<() => void>();
  private closed = false;

  constructor(@Inject(BUS_CLIENT) private readonly client: NamespacedRedisClient) {}

  /** Resolves once Redis has taken the event; rejects when Redis is unreachable. */
  async publish<E extends EventName>(event: E, payload: EventPayload<E>): Promise<void> {
    this.refuseWhenClosed(event);
    await lastValueFrom(this.client.emit(event, payload), { defaultValue: undefined });
  }

  async request<M extends MessageName>(
    message: M,
    payload: MessageRequest<M>,
    timeoutMs: number,
  ): Promise<MessageReply<M>> {
    this.refuseWhenClosed(message);
    return new Promise<MessageReply<M>>((resolve, reject) => {
      const cancel = () => {
        subscription.unsubscribe();
        reject(new Error(`${message}: not answered, the service is shutting down`));
      };
      this.pending.add(cancel);
      const subscription = this.client
        .send<MessageReply<M>>(message, payload)
        .pipe(timeout(timeoutMs))
        .subscribe({
          next: (reply) => {
            this.pending.delete(cancel);
            resolve(reply);
          },
          error: (error: unknown) => {
            this.pending.delete(cancel);
            reject(error instanceof Error ? error : new Error(String(error)));
          },
          complete: () => {
            this.pending.delete(cancel);
            reject(new Error(`${message}: the reply was empty`));
          },
        });
    });
  }

  /**
   * At shutdown, before the connection closes: a request still in flight would otherwise
   * publish on a closing connection (Nest leaves that failure unhandled), and a request or
   * event sent afterwards would open a new connection that nothing closes.
   */
  close(): void {
    this.closed = true;
    for (const cancel of this.pending) cancel();
    this.pending.clear();
  }

  private refuseWhenClosed(name: string): void {
    if (this.closed) throw new Error(`${name}: not sent, the service is shutting down`);
  }
}

const logger = new Logger('EventBus');

type Handler = (payload: never, ...rest: unknown[]) => unknown;

function validatingHandler(
  schema: new () => object,
  name: string,
  descriptor: PropertyDescriptor,
  onInvalid: 'drop' | 'throw',
): void {
  const handle = descriptor.value as Handler;
  // Compiled once per handler: class-validator's per-call work would cost seconds for a
  // routing change of a hundred thousand keys (docs/performance.md, "How cost grows").
  const validate = payloadValidator(schema);
  descriptor.value = function (this: unknown, data: unknown, ...rest: unknown[]) {
    let payload: object;
    try {
      payload = validate(data);
    } catch (error) {
      if (onInvalid === 'throw') throw error;
      logger.warn({
        message: 'dropped an invalid event',
        event: name,
        reason: (error as Error).message,
      });
      return undefined;
    }
    return handle.call(this, payload as never, ...rest);
  } as Handler;
}

type MethodDecoratorFn = (
  target: object,
  key: string | symbol,
  descriptor: PropertyDescriptor,
) => void;

/** Handles a contract event; payloads that do not validate are logged and dropped. */
export function OnEvent(event: EventName): MethodDecoratorFn {
  return (target, key, descriptor) => {
    validatingHandler(EVENT_PAYLOADS[event], event, descriptor, 'drop');
    EventPattern(event)(target, key, descriptor);
  };
}

/** Answers a contract request; an invalid request is answered with an error. */
export function OnMessage(message: MessageName): MethodDecoratorFn {
  return (target, key, descriptor) => {
    validatingHandler(MESSAGE_REQUESTS[message], message, descriptor, 'throw');
    MessagePattern(message)(target, key, descriptor);
  };
}
