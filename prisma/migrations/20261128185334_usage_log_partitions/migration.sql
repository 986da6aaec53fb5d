-- UsageLog becomes a table partitioned by month on "requestedAt" (docs/scaling.md, "Usage
-- partitions"): retention drops whole months instead of deleting rows, and a report over
-- a range reads only the months it covers. Postgres requires every unique key of a
-- partitioned table to include the partition key, so the primary key is (id, requestedAt)
-- and the one-row-per-request key is (requestId, requestedAt): a record delivered again
-- (a job retried, the edge's spool replayed) carries the requestedAt the edge stamped, so
-- it still conflicts with its first delivery.
--
-- Postgres cannot partition a table in place: the rows move to a new table, which takes
-- the old one's name, sequence and constraint names (those schema.prisma implies).

ALTER TABLE "UsageLog" RENAME TO "UsageLog_unpartitioned";
ALTER TABLE "UsageLog_unpartitioned" RENAME CONSTRAINT "UsageLog_pkey" TO "UsageLog_unpartitioned_pkey";
ALTER TABLE "UsageLog_unpartitioned" RENAME CONSTRAINT "UsageLog_channelId_fkey" TO "UsageLog_unpartitioned_channelId_fkey";
ALTER TABLE "UsageLog_unpartitioned" RENAME CONSTRAINT "UsageLog_channelKeyId_fkey" TO "UsageLog_unpartitioned_channelKeyId_fkey";
ALTER TABLE "UsageLog_unpartitioned" RENAME CONSTRAINT "UsageLog_tokenId_fkey" TO "UsageLog_unpartitioned_tokenId_fkey";
ALTER INDEX "UsageLog_requestId_key" RENAME TO "UsageLog_unpartitioned_requestId_key";
ALTER INDEX "UsageLog_requestedAt_idx" RENAME TO "UsageLog_unpartitioned_requestedAt_idx";
ALTER INDEX "UsageLog_tokenId_requestedAt_idx" RENAME TO "UsageLog_unpartitioned_tokenId_requestedAt_idx";
ALTER INDEX "UsageLog_channelId_requestedAt_idx" RENAME TO "UsageLog_unpartitioned_channelId_requestedAt_idx";
ALTER INDEX "UsageLog_model_requestedAt_idx" RENAME TO "UsageLog_unpartitioned_model_requestedAt_idx";
ALTER INDEX "UsageLog_teamId_requestedAt_idx" RENAME TO "UsageLog_unpartitioned_teamId_requestedAt_idx";

CREATE TABLE "UsageLog" (
    "id" BIGINT NOT NULL DEFAULT nextval('"UsageLog_id_seq"'::regclass),
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
    "cachedTokens" INTEGER NOT NULL DEFAULT 0,
    "priceMultiplier" INTEGER NOT NULL DEFAULT 1000000,
    "teamId" INTEGER,

    CONSTRAINT "UsageLog_pkey" PRIMARY KEY ("id", "requestedAt")
) PARTITION BY RANGE ("requestedAt");

ALTER SEQUENCE "UsageLog_id_seq" OWNED BY "UsageLog"."id";

CREATE UNIQUE INDEX "UsageLog_requestId_requestedAt_key" ON "UsageLog"("requestId", "requestedAt");
CREATE INDEX "UsageLog_requestedAt_idx" ON "UsageLog"("requestedAt");
CREATE INDEX "UsageLog_tokenId_requestedAt_idx" ON "UsageLog"("tokenId", "requestedAt");
CREATE INDEX "UsageLog_channelId_requestedAt_idx" ON "UsageLog"("channelId", "requestedAt");
CREATE INDEX "UsageLog_model_requestedAt_idx" ON "UsageLog"("model", "requestedAt");
CREATE INDEX "UsageLog_teamId_requestedAt_idx" ON "UsageLog"("teamId", "requestedAt");

ALTER TABLE "UsageLog" ADD CONSTRAINT "UsageLog_tokenId_fkey" FOREIGN KEY ("tokenId") REFERENCES "Token"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "UsageLog" ADD CONSTRAINT "UsageLog_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "Channel"("id") ON DELETE SET NULL ON UPDATE CASCADE;
ALTER TABLE "UsageLog" ADD CONSTRAINT "UsageLog_channelKeyId_fkey" FOREIGN KEY ("channelKeyId") REFERENCES "ChannelKey"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Rows outside every month created: none is ever refused for want of a partition. Metering
-- creates the months ahead daily, so it stays empty unless a clock is far off.
CREATE TABLE "UsageLog_default" PARTITION OF "UsageLog" DEFAULT;

-- One partition per month from the oldest row kept to two months ahead (metering's
-- maintenance keeps that runway: MaintenanceRepository.ensureMonthPartition).
DO $$
DECLARE
  month date := date_trunc('month', coalesce(
    (SELECT min("requestedAt") FROM "UsageLog_unpartitioned"), now()) AT TIME ZONE 'UTC')::date;
  last date := (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 months')::date;
BEGIN
  WHILE month <= last LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF "UsageLog" FOR VALUES FROM (%L) TO (%L)',
      'UsageLog_' || to_char(month, 'YYYY_MM'),
      month::text || ' 00:00:00+00',
      (month + interval '1 month')::date::text || ' 00:00:00+00');
    month := (month + interval '1 month')::date;
  END LOOP;
END $$;

INSERT INTO "UsageLog" SELECT
    "id", "requestId", "tokenId", "channelId", "channelKeyId", "endpoint", "model",
    "upstreamModel", "promptTokens", "completionTokens", "tokensCounted", "cost", "status",
    "errorCode", "latencyMs", "firstByteMs", "stream", "attempts", "clientIp", "requestedAt",
    "createdAt", "cachedTokens", "priceMultiplier", "teamId"
  FROM "UsageLog_unpartitioned";

DROP TABLE "UsageLog_unpartitioned";
