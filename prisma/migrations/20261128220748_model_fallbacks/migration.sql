-- AlterTable
ALTER TABLE "UsageLog" ADD COLUMN     "requestedModel" VARCHAR(128);

-- CreateTable
CREATE TABLE "ModelFallback" (
    "model" VARCHAR(128) NOT NULL,
    "fallbacks" TEXT[],
    "contextWindow" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "contentPolicy" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ModelFallback_pkey" PRIMARY KEY ("model")
);
