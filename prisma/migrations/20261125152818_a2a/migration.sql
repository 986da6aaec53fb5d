-- CreateEnum
CREATE TYPE "A2aTaskState" AS ENUM ('submitted', 'working', 'completed', 'failed', 'canceled');

-- CreateTable
CREATE TABLE "A2aAgent" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(48) NOT NULL,
    "cardUrl" TEXT NOT NULL,
    "headersCiphertext" TEXT,
    "headerNames" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "A2aAgent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "A2aKey" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "keyHash" CHAR(64) NOT NULL,
    "lastFour" VARCHAR(4) NOT NULL,
    "lastUsedAt" TIMESTAMPTZ(3),
    "revokedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "A2aKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "A2aTask" (
    "id" VARCHAR(128) NOT NULL,
    "userId" INTEGER NOT NULL,
    "contextId" VARCHAR(128) NOT NULL,
    "state" "A2aTaskState" NOT NULL,
    "task" JSONB NOT NULL,
    "transitions" JSONB NOT NULL DEFAULT '[]',
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "A2aTask_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "A2aAgent_name_key" ON "A2aAgent"("name");

-- CreateIndex
CREATE UNIQUE INDEX "A2aKey_keyHash_key" ON "A2aKey"("keyHash");

-- CreateIndex
CREATE INDEX "A2aKey_userId_idx" ON "A2aKey"("userId");

-- CreateIndex
CREATE INDEX "A2aTask_userId_updatedAt_idx" ON "A2aTask"("userId", "updatedAt");

-- AddForeignKey
ALTER TABLE "A2aKey" ADD CONSTRAINT "A2aKey_userId_fkey" FOREIGN KEY ("userId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "A2aTask" ADD CONSTRAINT "A2aTask_userId_fkey" FOREIGN KEY ("userId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;
