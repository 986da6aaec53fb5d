-- AlterTable
ALTER TABLE "CreditEntry" ADD COLUMN     "model" VARCHAR(128);

-- CreateIndex
CREATE INDEX "CreditEntry_createdAt_idx" ON "CreditEntry"("createdAt");

-- CreateIndex
CREATE INDEX "CreditEntry_requestId_idx" ON "CreditEntry"("requestId");

-- Freezes written before this column name their model only in their reason
-- ("reply by <model> (frozen)", "A2A task <id> by <model> (frozen)"): copy it over, so the
-- admin overview's spend per model covers them too.
UPDATE "CreditEntry"
SET "model" = LEFT(substring("reason" from '^(?:reply|A2A task \S+) by (.+) \(frozen\)$'), 128)
WHERE "kind" = 'spend' AND "model" IS NULL;
