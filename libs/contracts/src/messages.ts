import { RoutingSnapshot, RoutingSnapshotRequest } from './routing.js';

// Request-response patterns over Redis: the name, the request class and the reply type.

export const Messages = {
  /** Asked by an edge at start-up; answered by the router with the current snapshot. */
  GetRoutingSnapshot: 'routing.snapshot.get',
} as const;

export type MessageName = (typeof Messages)[keyof typeof Messages];

export const MESSAGE_REQUESTS = {
  [Messages.GetRoutingSnapshot]: RoutingSnapshotRequest,
} as const satisfies Record<MessageName, new () => object>;

export interface MessageReplies {
  [Messages.GetRoutingSnapshot]: RoutingSnapshot;
}

export type MessageRequest<M extends MessageName> = InstanceType<(typeof MESSAGE_REQUESTS)[M]>;
export type MessageReply<M extends MessageName> = MessageReplies[M];
