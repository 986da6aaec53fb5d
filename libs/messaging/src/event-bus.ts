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
import { validatePayload } from './payload.js';
import { type NamespacedRedisClient } from './transport.js';

export const BUS_CLIENT = Symbol('BUS_CLIENT');

/** Publishes the events and sends the requests declared in `@switchyard/contracts`, and only those. */
@Injectable()
export class EventBus {
  constructor(@Inject(BUS_CLIENT) private readonly client: NamespacedRedisClient) {}

  /** Resolves once Redis has taken the event; rejects when Redis is unreachable. */
  async publish<E extends EventName>(event: E, payload: EventPayload<E>): Promise<void> {
    await lastValueFrom(this.client.emit(event, payload), { defaultValue: undefined });
  }

  async request<M extends MessageName>(
    message: M,
    payload: MessageRequest<M>,
    timeoutMs: number,
  ): Promise<MessageReply<M>> {
    return lastValueFrom(
      this.client.send<MessageReply<M>>(message, payload).pipe(timeout(timeoutMs)),
    );
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
  descriptor.value = function (this: unknown, data: unknown, ...rest: unknown[]) {
    let payload: object;
    try {
      payload = validatePayload(schema, data);
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
