-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "AdminRole" AS ENUM ('owner', 'admin', 'viewer');

-- CreateEnum
CREATE TYPE "ChannelKind" AS ENUM ('single', 'aggregated');

-- CreateEnum
CREATE TYPE "ChannelStatus" AS ENUM ('enabled', 'disabled', 'auto_disabled');

-- CreateEnum
CREATE TYPE "TokenStatus" AS ENUM ('enabled', 'disabled', 'exhausted');

-- CreateEnum
CREATE TYPE "ChatRole" AS ENUM ('user', 'admin');

-- CreateEnum
CREATE TYPE "Platform" AS ENUM ('openai');

-- CreateEnum
CREATE TYPE "ModelPurpose" AS ENUM ('chat', 'drawing', 'music');

-- CreateEnum
CREATE TYPE "MessageRole" AS ENUM ('system', 'user', 'assistant');

-- CreateEnum
CREATE TYPE "MessageStatus" AS ENUM ('complete', 'partial', 'failed');

-- CreateTable
CREATE TABLE "AdminUser" (
    "id" SERIAL NOT NULL,
    "username" VARCHAR(64) NOT NULL,
    "passwordHash" TEXT NOT NULL,
    "role" "AdminRole" NOT NULL,
    "mustChangePassword" BOOLEAN NOT NULL DEFAULT false,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AdminUser_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AuditLog" (
    "id" BIGSERIAL NOT NULL,
    "actorId" INTEGER,
    "actorName" VARCHAR(64) NOT NULL,
    "action" VARCHAR(64) NOT NULL,
    "targetType" VARCHAR(32) NOT NULL,
    "targetId" VARCHAR(64),
    "details" JSONB,
    "clientIp" VARCHAR(64),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AuditLog_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Channel" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(128) NOT NULL,
    "kind" "ChannelKind" NOT NULL,
    "baseUrl" TEXT NOT NULL,
    "models" TEXT[],
    "modelMapping" JSONB NOT NULL DEFAULT '{}',
    "priority" INTEGER NOT NULL DEFAULT 0,
    "weight" INTEGER NOT NULL DEFAULT 1,
    "groups" TEXT[] DEFAULT ARRAY['default']::TEXT[],
    "status" "ChannelStatus" NOT NULL DEFAULT 'enabled',
    "statusReason" TEXT,
    "statusChangedAt" TIMESTAMPTZ(3),
    "rpmLimit" INTEGER,
    "tpmLimit" INTEGER,
    "concurrencyLimit" INTEGER,
    "usedQuota" BIGINT NOT NULL DEFAULT 0,
    "requestCount" BIGINT NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Channel_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChannelKey" (
    "id" SERIAL NOT NULL,
    "channelId" INTEGER NOT NULL,
    "secretCiphertext" TEXT NOT NULL,
    "fingerprint" CHAR(64) NOT NULL,
    "lastFour" VARCHAR(4) NOT NULL,
    "rpmLimit" INTEGER,
    "tpmLimit" INTEGER,
    "concurrencyLimit" INTEGER,
    "status" "ChannelStatus" NOT NULL DEFAULT 'enabled',
    "statusReason" TEXT,
    "statusChangedAt" TIMESTAMPTZ(3),
    "usedQuota" BIGINT NOT NULL DEFAULT 0,
    "requestCount" BIGINT NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ChannelKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Token" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(128) NOT NULL,
    "keyHash" CHAR(64) NOT NULL,
    "lastFour" VARCHAR(4) NOT NULL,
    "status" "TokenStatus" NOT NULL DEFAULT 'enabled',
    "expiresAt" TIMESTAMPTZ(3),
    "quota" BIGINT,
    "usedQuota" BIGINT NOT NULL DEFAULT 0,
    "models" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "allowIps" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "group" VARCHAR(64) NOT NULL DEFAULT 'default',
    "rateLimit" INTEGER,
    "version" INTEGER NOT NULL DEFAULT 1,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Token_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModelPrice" (
    "model" VARCHAR(128) NOT NULL,
    "inputPrice" INTEGER NOT NULL,
    "outputPrice" INTEGER NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ModelPrice_pkey" PRIMARY KEY ("model")
);

-- CreateTable
CREATE TABLE "UsageLog" (
    "id" BIGSERIAL NOT NULL,
    "requestId" VARCHAR(64) NOT NULL,
    "tokenId" INTEGER,
    "channelId" INTEGER,
    "channelKeyId" INTEGER,
    "endpoint" VARCHAR(32) NOT NULL,
    "model" VARCHAR(128) NOT NULL,
    "upstreamModel" VARCHAR(128),
    "promptTokens" INTEGER NOT NULL DEFAULT 0,
    "completionTokens" INTEGER NOT NULL DEFAULT 0,
    "tokensCounted" BOOLEAN NOT NULL DEFAULT false,
    "cost" BIGINT NOT NULL DEFAULT 0,
    "status" INTEGER NOT NULL,
    "errorCode" VARCHAR(64),
    "latencyMs" INTEGER NOT NULL,
    "firstByteMs" INTEGER,
    "stream" BOOLEAN NOT NULL DEFAULT false,
    "attempts" INTEGER NOT NULL DEFAULT 1,
    "clientIp" VARCHAR(64),
    "requestedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UsageLog_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UsageDaily" (
    "day" DATE NOT NULL,
    "tokenId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "model" VARCHAR(128) NOT NULL,
    "requests" INTEGER NOT NULL,
    "failures" INTEGER NOT NULL,
    "promptTokens" BIGINT NOT NULL,
    "completionTokens" BIGINT NOT NULL,
    "cost" BIGINT NOT NULL,

    CONSTRAINT "UsageDaily_pkey" PRIMARY KEY ("day","tokenId","channelId","model")
);

-- CreateTable
CREATE TABLE "ChatUser" (
    "id" SERIAL NOT NULL,
    "username" VARCHAR(64) NOT NULL,
    "email" VARCHAR(254),
    "passwordHash" TEXT NOT NULL,
    "role" "ChatRole" NOT NULL DEFAULT 'user',
    "modelPermissions" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ChatUser_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ChatModel" (
    "id" SERIAL NOT NULL,
    "platform" "Platform" NOT NULL DEFAULT 'openai',
    "name" VARCHAR(128) NOT NULL,
    "purpose" "ModelPurpose" NOT NULL DEFAULT 'chat',
    "open" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ChatModel_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKeyRecord" (
    "id" SERIAL NOT NULL,
    "platform" "Platform" NOT NULL DEFAULT 'openai',
    "address" TEXT NOT NULL,
    "addressNormalized" BOOLEAN NOT NULL DEFAULT false,
    "keyCiphertext" TEXT NOT NULL,
    "keyLastFour" VARCHAR(4) NOT NULL,
    "purpose" "ModelPurpose" NOT NULL DEFAULT 'chat',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ApiKeyRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Conversation" (
    "id" UUID NOT NULL,
    "userId" INTEGER NOT NULL,
    "title" VARCHAR(200) NOT NULL,
    "model" VARCHAR(128) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Conversation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Message" (
    "id" BIGSERIAL NOT NULL,
    "conversationId" UUID NOT NULL,
    "role" "MessageRole" NOT NULL,
    "content" TEXT NOT NULL,
    "imageUrls" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "model" VARCHAR(128),
    "status" "MessageStatus" NOT NULL DEFAULT 'complete',
    "errorCode" VARCHAR(64),
    "promptTokens" INTEGER NOT NULL DEFAULT 0,
    "completionTokens" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "License" (
    "id" SERIAL NOT NULL,
    "licenseId" VARCHAR(64) NOT NULL,
    "licensee" VARCHAR(200) NOT NULL,
    "edition" VARCHAR(32) NOT NULL,
    "installationId" VARCHAR(64) NOT NULL,
    "issuedAt" TIMESTAMPTZ(3) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3) NOT NULL,
    "signed" TEXT NOT NULL,
    "activatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "License_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Setting" (
    "key" VARCHAR(64) NOT NULL,
    "value" JSONB NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Setting_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE UNIQUE INDEX "AdminUser_username_key" ON "AdminUser"("username");

-- CreateIndex
CREATE INDEX "AuditLog_createdAt_idx" ON "AuditLog"("createdAt");

-- CreateIndex
CREATE INDEX "AuditLog_targetType_targetId_idx" ON "AuditLog"("targetType", "targetId");

-- CreateIndex
CREATE INDEX "AuditLog_actorId_idx" ON "AuditLog"("actorId");

-- CreateIndex
CREATE INDEX "Channel_status_idx" ON "Channel"("status");

-- CreateIndex
CREATE INDEX "Channel_priority_idx" ON "Channel"("priority");

-- CreateIndex
CREATE INDEX "ChannelKey_status_idx" ON "ChannelKey"("status");

-- CreateIndex
CREATE UNIQUE INDEX "ChannelKey_channelId_fingerprint_key" ON "ChannelKey"("channelId", "fingerprint");

-- CreateIndex
CREATE UNIQUE INDEX "Token_keyHash_key" ON "Token"("keyHash");

-- CreateIndex
CREATE INDEX "Token_status_idx" ON "Token"("status");

-- CreateIndex
CREATE UNIQUE INDEX "UsageLog_requestId_key" ON "UsageLog"("requestId");

-- CreateIndex
CREATE INDEX "UsageLog_requestedAt_idx" ON "UsageLog"("requestedAt");

-- CreateIndex
CREATE INDEX "UsageLog_tokenId_requestedAt_idx" ON "UsageLog"("tokenId", "requestedAt");

-- CreateIndex
CREATE INDEX "UsageLog_channelId_requestedAt_idx" ON "UsageLog"("channelId", "requestedAt");

-- CreateIndex
CREATE INDEX "UsageLog_model_requestedAt_idx" ON "UsageLog"("model", "requestedAt");

-- CreateIndex
CREATE INDEX "UsageDaily_day_idx" ON "UsageDaily"("day");

-- CreateIndex
CREATE UNIQUE INDEX "ChatUser_username_key" ON "ChatUser"("username");

-- CreateIndex
CREATE UNIQUE INDEX "ChatUser_email_key" ON "ChatUser"("email");

-- CreateIndex
CREATE UNIQUE INDEX "ChatModel_name_key" ON "ChatModel"("name");

-- CreateIndex
CREATE INDEX "ApiKeyRecord_purpose_enabled_idx" ON "ApiKeyRecord"("purpose", "enabled");

-- CreateIndex
CREATE INDEX "Conversation_userId_updatedAt_idx" ON "Conversation"("userId", "updatedAt");

-- CreateIndex
CREATE INDEX "Message_conversationId_createdAt_idx" ON "Message"("conversationId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "License_licenseId_key" ON "License"("licenseId");

-- AddForeignKey
ALTER TABLE "AuditLog" ADD CONSTRAINT "AuditLog_actorId_fkey" FOREIGN KEY ("actorId") REFERENCES "AdminUser"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ChannelKey" ADD CONSTRAINT "ChannelKey_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "Channel"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UsageLog" ADD CONSTRAINT "UsageLog_tokenId_fkey" FOREIGN KEY ("tokenId") REFERENCES "Token"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UsageLog" ADD CONSTRAINT "UsageLog_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "Channel"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UsageLog" ADD CONSTRAINT "UsageLog_channelKeyId_fkey" FOREIGN KEY ("channelKeyId") REFERENCES "ChannelKey"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Conversation" ADD CONSTRAINT "Conversation_userId_fkey" FOREIGN KEY ("userId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Message" ADD CONSTRAINT "Message_conversationId_fkey" FOREIGN KEY ("conversationId") REFERENCES "Conversation"("id") ON DELETE CASCADE ON UPDATE CASCADE;
