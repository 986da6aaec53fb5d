import { type ChatUser } from '@switchyard/db';
import { type UserProfileResponse } from '../auth/auth.dto.js';
import { type Principal } from '../auth/principal.js';
import { type AdminUserResponse, type UsageResponse } from './users.dto.js';
import { type ListedUser } from './users.repository.js';

export function toUsage(user: ChatUser): UsageResponse {
  const promptTokens = Number(user.promptTokens);
  const completionTokens = Number(user.completionTokens);
  return {
    requests: user.requestCount,
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
  };
}

export function toProfile(user: ChatUser): UserProfileResponse {
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    role: user.role,
    modelPermissions: user.modelPermissions,
    createdAt: user.createdAt.toISOString(),
  };
}

export function toAdminUser(user: ListedUser): AdminUserResponse {
  return {
    ...toProfile(user),
    disabled: user.disabled,
    usage: toUsage(user),
    credits: user.credits,
    plan: user.creditPlan?.plan ?? null,
  };
}

export function toPrincipal(user: ChatUser, sessionHash: string): Principal {
  return {
    id: user.id,
    username: user.username,
    role: user.role,
    modelPermissions: user.modelPermissions,
    sessionHash,
  };
}
