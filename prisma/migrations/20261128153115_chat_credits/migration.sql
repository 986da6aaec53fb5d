-- CreateEnum
CREATE TYPE "CreditKind" AS ENUM ('grant', 'spend', 'refund', 'redeem', 'invite', 'plan', 'adjust');

-- AlterTable
ALTER TABLE "ChatUser" ADD COLUMN     "credits" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "ChatModel" ADD COLUMN     "creditsPer1kInput" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "creditsPer1kOutput" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "creditsPerCall" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "CreditEntry" (
    "id" BIGSERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "kind" "CreditKind" NOT NULL,
    "amount" INTEGER NOT NULL,
    "balanceAfter" INTEGER NOT NULL,
    "reason" VARCHAR(200) NOT NULL,
    "actorId" INTEGER,
    "requestId" VARCHAR(64),
    "conversationId" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CreditEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CreditCodeBatch" (
    "id" SERIAL NOT NULL,
    "credits" INTEGER NOT NULL,
    "count" INTEGER NOT NULL,
    "note" VARCHAR(200) NOT NULL,
    "expiresAt" TIMESTAMPTZ(3),
    "createdById" INTEGER NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CreditCodeBatch_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CreditCode" (
    "id" SERIAL NOT NULL,
    "batchId" INTEGER NOT NULL,
    "codeHash" CHAR(64) NOT NULL,
    "lastFour" VARCHAR(4) NOT NULL,
    "redeemedById" INTEGER,
    "redeemedAt" TIMESTAMPTZ(3),

    CONSTRAINT "CreditCode_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "CreditEntry_userId_id_idx" ON "CreditEntry"("userId", "id");

-- CreateIndex
CREATE INDEX "CreditEntry_userId_kind_id_idx" ON "CreditEntry"("userId", "kind", "id");

-- CreateIndex
CREATE UNIQUE INDEX "CreditCode_codeHash_key" ON "CreditCode"("codeHash");

-- CreateIndex
CREATE INDEX "CreditCode_batchId_idx" ON "CreditCode"("batchId");

-- AddForeignKey
ALTER TABLE "CreditEntry" ADD CONSTRAINT "CreditEntry_userId_fkey" FOREIGN KEY ("userId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CreditCode" ADD CONSTRAINT "CreditCode_batchId_fkey" FOREIGN KEY ("batchId") REFERENCES "CreditCodeBatch"("id") ON DELETE CASCADE ON UPDATE CASCADE;
