-- AlterTable
ALTER TABLE "Token" ADD COLUMN     "requestLog" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "Team" ADD COLUMN     "requestLog" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "RequestLog" (
    "requestId" VARCHAR(64) NOT NULL,
    "tokenId" INTEGER NOT NULL,
    "endpoint" VARCHAR(32) NOT NULL,
    "model" VARCHAR(128) NOT NULL,
    "status" INTEGER NOT NULL,
    "traceId" CHAR(32),
    "requestBody" TEXT NOT NULL,
    "responseBody" TEXT NOT NULL,
    "requestTruncated" BOOLEAN NOT NULL DEFAULT false,
    "responseTruncated" BOOLEAN NOT NULL DEFAULT false,
    "requestedAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RequestLog_pkey" PRIMARY KEY ("requestId")
);

-- CreateIndex
CREATE INDEX "RequestLog_requestedAt_idx" ON "RequestLog"("requestedAt");

-- CreateIndex
CREATE INDEX "RequestLog_tokenId_requestedAt_idx" ON "RequestLog"("tokenId", "requestedAt");
