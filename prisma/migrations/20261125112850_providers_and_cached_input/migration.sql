-- CreateEnum
CREATE TYPE "ChannelProvider" AS ENUM ('openai', 'azure', 'anthropic', 'gemini', 'bedrock');

-- AlterTable
ALTER TABLE "Channel" ADD COLUMN     "provider" "ChannelProvider" NOT NULL DEFAULT 'openai',
ADD COLUMN     "providerSettings" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "ModelPrice" ADD COLUMN     "cachedInputPrice" INTEGER;

-- AlterTable
ALTER TABLE "UsageLog" ADD COLUMN     "cachedTokens" INTEGER NOT NULL DEFAULT 0;
