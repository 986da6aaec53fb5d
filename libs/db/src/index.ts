export { DatabaseModule, DatabaseReadiness } from './database.module.js';
export { isRecordNotFound, isUniqueViolation } from './errors.js';
export { PrismaService } from './prisma.service.js';
export { type DatabaseOptions } from './database-options.js';
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
  Channel,
  ChannelKey,
  ChatModel,
  ChatUsageDay,
  ChatUser,
  Conversation,
  License,
  McpServer,
  Message,
  ModelPrice,
  Setting,
  Token,
  UsageDaily,
  UsageLog,
} from './generated/prisma/client.js';
