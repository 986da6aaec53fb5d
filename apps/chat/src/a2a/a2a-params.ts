// The params of every A2A JSON-RPC method, checked before the SDK reads them: the SDK
// takes them as they come, so `"id": true` reached the task store and came back as
// -32603 "taskId.trim is not a function" (docs/tools.md, "A2A"). A wrong type is a -32602
// naming the parameter instead.

/** JSON-RPC's "Invalid params". */
export const JSON_RPC_INVALID_PARAMS = -32602;
/** JSON-RPC's "Internal error"; its message never carries what went wrong inside. */
export const JSON_RPC_INTERNAL_ERROR = -32603;
export const INTERNAL_ERROR_MESSAGE = 'Internal error';

type Check = (value: unknown) => string | null;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text: Check = (value) =>
  typeof value === 'string' && value.trim() !== '' ? null : 'must be a non-empty string';
const optionalText: Check = (value) =>
  value === undefined || typeof value === 'string' ? null : 'must be a string';
const count: Check = (value) =>
  value === undefined || (Number.isSafeInteger(value) && (value as number) >= 0)
    ? null
    : 'must be a non-negative integer';
const flag: Check = (value) =>
  value === undefined || typeof value === 'boolean' ? null : 'must be true or false';
const optionalObject: Check = (value) =>
  value === undefined || isObject(value) ? null : 'must be an object';
const object: Check = (value) => (isObject(value) ? null : 'must be an object');

/** A message: an object with a message id, a role and a list of parts (objects). */
const message: Check = (value) => {
  if (!isObject(value)) return 'must be an object';
  for (const key of ['messageId', 'role'] as const) {
    const problem = text(value[key]);
    if (problem) return `.${key} ${problem}`;
  }
  if (!Array.isArray(value.parts) || value.parts.length === 0) {
    return '.parts must be a non-empty array';
  }
  const bad = value.parts.findIndex((part) => !isObject(part));
  if (bad >= 0) return `.parts[${bad}] must be an object`;
  for (const key of ['contextId', 'taskId'] as const) {
    const problem = optionalText(value[key]);
    if (problem) return `.${key} ${problem}`;
  }
  return null;
};

const sendMessage = {
  message,
  configuration: optionalObject,
  metadata: optionalObject,
  tenant: optionalText,
};
const taskId = { id: text, tenant: optionalText };

/** Per method, the checks of its params' fields; a method not listed is the SDK's to refuse. */
const METHODS: Record<string, Record<string, Check>> = {
  // v0.3 (no A2A-Version header)
  'message/send': sendMessage,
  'message/stream': sendMessage,
  'tasks/get': { id: text, historyLength: count, metadata: optionalObject },
  'tasks/cancel': { id: text, metadata: optionalObject },
  'tasks/resubscribe': { id: text, metadata: optionalObject },
  'tasks/pushNotificationConfig/set': { taskId: text, pushNotificationConfig: object },
  'tasks/pushNotificationConfig/get': { id: text, pushNotificationConfigId: optionalText },
  'tasks/pushNotificationConfig/list': { id: text },
  'tasks/pushNotificationConfig/delete': { id: text, pushNotificationConfigId: text },
  'agent/getAuthenticatedExtendedCard': {},
  // v1.0
  SendMessage: sendMessage,
  SendStreamingMessage: sendMessage,
  GetTask: { ...taskId, historyLength: count },
  CancelTask: { ...taskId, metadata: optionalObject },
  SubscribeToTask: taskId,
  ListTasks: {
    contextId: optionalText,
    status: optionalText,
    pageSize: count,
    pageToken: optionalText,
    historyLength: count,
    includeArtifacts: flag,
    statusTimestampAfter: optionalText,
    tenant: optionalText,
  },
  CreateTaskPushNotificationConfig: { taskId: text, tenant: optionalText },
  GetTaskPushNotificationConfig: { taskId: text, id: text, tenant: optionalText },
  ListTaskPushNotificationConfigs: { taskId: text, tenant: optionalText },
  DeleteTaskPushNotificationConfig: { taskId: text, id: text, tenant: optionalText },
  GetExtendedAgentCard: { tenant: optionalText },
};

/**
 * Why a request's params do not fit its method (`params.id must be a non-empty string`),
 * or null when they do or the method is not one of A2A's.
 */
export function invalidParams(body: unknown): string | null {
  if (!isObject(body) || typeof body.method !== 'string') return null;
  const checks = METHODS[body.method];
  if (!checks) return null;
  const params = body.params;
  if (params === undefined && Object.values(checks).every((check) => check(undefined) === null)) {
    return null;
  }
  if (!isObject(params)) return 'params must be an object';
  for (const [name, check] of Object.entries(checks)) {
    const problem = check(params[name]);
    if (problem) return `params.${name}${problem.startsWith('.') ? '' : ' '}${problem}`;
  }
  return null;
}
