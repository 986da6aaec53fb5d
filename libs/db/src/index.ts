export { DatabaseModule, DatabaseReadiness } from './database.module.js';
export { isRecordNotFound, isUniqueViolation } from './errors.js';
export { PrismaService } from './prisma.service.js';
export { ReportingDatabase, type ReportingTarget } from './reporting-database.js';
export { type DatabaseOptions } from './database-options.js';
export { createPgPool, pgPoolSettings, type DatabasePooler } from './pg-pool.js';
export { applyMigrations, MigrationError, type MigrationReport } from './migrate/migrator.js';
export { defaultMigrationsDirectory } from './migrate/paths.js';
export * from './generated/prisma/enums.js';
export { Prisma } from './generated/prisma/client.js';
export type {
  A2aAgent,
  A2aKey,
  A2aTask,
  AdminUser,
  ApiKeyRecord,
  Attachment,
  AuditLog,
  BalanceEntry,
  Budget,
  BudgetSpend,
  Channel,
  ChannelKey,
  ChatModel,
  ChatUsageDay,
  ChatUser,
  Conversation,
  CreditCode,
  CreditCodeBatch,
  CreditHold,
  CreditInvitation,
  CreditPlan,
  UserCreditPlan,
  CreditEntry,
  License,
  McpServer,
  Message,
  ModelFallback,
  ModelPrice,
  PriceGroup,
  RedemptionBatch,
  RedemptionCode,
  Setting,
  Team,
  TeamMember,
  Token,
  UsageDaily,
  UsageLog,
} from './generated/prisma/client.js';
