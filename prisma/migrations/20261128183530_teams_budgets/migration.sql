-- CreateEnum
CREATE TYPE "TeamBilling" AS ENUM ('budget', 'balance');

-- CreateEnum
CREATE TYPE "BudgetLevel" AS ENUM ('token', 'member', 'team', 'gateway');

-- CreateEnum
CREATE TYPE "BudgetPeriod" AS ENUM ('none', 'day', 'week', 'month');

-- CreateEnum
CREATE TYPE "BalanceEntryKind" AS ENUM ('credit', 'redeem', 'debit', 'adjust');

-- AlterEnum
ALTER TYPE "AdminRole" ADD VALUE 'member';

-- AlterTable
ALTER TABLE "Token" ADD COLUMN     "ownerId" INTEGER,
ADD COLUMN     "teamId" INTEGER;

-- AlterTable
ALTER TABLE "UsageLog" ADD COLUMN     "priceMultiplier" INTEGER NOT NULL DEFAULT 1000000,
ADD COLUMN     "teamId" INTEGER;

-- CreateTable
CREATE TABLE "Team" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "models" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "rateLimit" INTEGER,
    "priceGroup" VARCHAR(64) NOT NULL DEFAULT 'default',
    "maxTokenDays" INTEGER,
    "billing" "TeamBilling" NOT NULL DEFAULT 'budget',
    "balance" BIGINT NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Team_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "TeamMember" (
    "teamId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TeamMember_pkey" PRIMARY KEY ("teamId","userId")
);

-- CreateTable
CREATE TABLE "Budget" (
    "id" SERIAL NOT NULL,
    "subject" VARCHAR(64) NOT NULL,
    "level" "BudgetLevel" NOT NULL,
    "teamId" INTEGER,
    "userId" INTEGER,
    "tokenId" INTEGER,
    "amount" BIGINT NOT NULL,
    "period" "BudgetPeriod" NOT NULL,
    "softPercent" INTEGER,
    "alertedFor" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Budget_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BudgetSpend" (
    "subject" VARCHAR(64) NOT NULL,
    "periodStart" TIMESTAMPTZ(3) NOT NULL,
    "spent" BIGINT NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "BudgetSpend_pkey" PRIMARY KEY ("subject","periodStart")
);

-- CreateTable
CREATE TABLE "PriceGroup" (
    "name" VARCHAR(64) NOT NULL,
    "multiplier" INTEGER NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "PriceGroup_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "BalanceEntry" (
    "id" BIGSERIAL NOT NULL,
    "teamId" INTEGER NOT NULL,
    "kind" "BalanceEntryKind" NOT NULL,
    "amount" BIGINT NOT NULL,
    "balanceAfter" BIGINT NOT NULL,
    "reason" VARCHAR(200) NOT NULL,
    "actorId" INTEGER,
    "requestId" VARCHAR(64),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "BalanceEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RedemptionBatch" (
    "id" SERIAL NOT NULL,
    "value" BIGINT NOT NULL,
    "count" INTEGER NOT NULL,
    "note" VARCHAR(200) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3),
    "createdById" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RedemptionBatch_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RedemptionCode" (
    "id" SERIAL NOT NULL,
    "batchId" INTEGER NOT NULL,
    "codeHash" CHAR(64) NOT NULL,
    "lastFour" VARCHAR(4) NOT NULL,
    "redeemedById" INTEGER,
    "redeemedTeamId" INTEGER,
    "redeemedAt" TIMESTAMPTZ(3),

    CONSTRAINT "RedemptionCode_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Team_name_key" ON "Team"("name");

-- CreateIndex
CREATE INDEX "TeamMember_userId_idx" ON "TeamMember"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "Budget_subject_key" ON "Budget"("subject");

-- CreateIndex
CREATE INDEX "Budget_teamId_idx" ON "Budget"("teamId");

-- CreateIndex
CREATE UNIQUE INDEX "BalanceEntry_requestId_key" ON "BalanceEntry"("requestId");

-- CreateIndex
CREATE INDEX "BalanceEntry_teamId_id_idx" ON "BalanceEntry"("teamId", "id");

-- CreateIndex
CREATE UNIQUE INDEX "RedemptionCode_codeHash_key" ON "RedemptionCode"("codeHash");

-- CreateIndex
CREATE INDEX "RedemptionCode_batchId_idx" ON "RedemptionCode"("batchId");

-- CreateIndex
CREATE INDEX "Token_teamId_idx" ON "Token"("teamId");

-- CreateIndex
CREATE INDEX "Token_ownerId_idx" ON "Token"("ownerId");

-- CreateIndex
CREATE INDEX "UsageLog_teamId_requestedAt_idx" ON "UsageLog"("teamId", "requestedAt");

-- AddForeignKey
ALTER TABLE "Token" ADD CONSTRAINT "Token_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Token" ADD CONSTRAINT "Token_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "AdminUser"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamMember" ADD CONSTRAINT "TeamMember_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "TeamMember" ADD CONSTRAINT "TeamMember_userId_fkey" FOREIGN KEY ("userId") REFERENCES "AdminUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BalanceEntry" ADD CONSTRAINT "BalanceEntry_teamId_fkey" FOREIGN KEY ("teamId") REFERENCES "Team"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RedemptionCode" ADD CONSTRAINT "RedemptionCode_batchId_fkey" FOREIGN KEY ("batchId") REFERENCES "RedemptionBatch"("id") ON DELETE CASCADE ON UPDATE CASCADE;
