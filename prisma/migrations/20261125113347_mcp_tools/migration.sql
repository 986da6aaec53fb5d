-- CreateEnum
CREATE TYPE "ToolMode" AS ENUM ('off', 'native', 'prompt');

-- AlterTable
ALTER TABLE "ChatModel" ADD COLUMN     "toolMode" "ToolMode" NOT NULL DEFAULT 'off';

-- AlterTable
ALTER TABLE "Conversation" ADD COLUMN     "mcpServerIds" INTEGER[] DEFAULT ARRAY[]::INTEGER[];

-- AlterTable
ALTER TABLE "Message" ADD COLUMN     "toolSteps" JSONB NOT NULL DEFAULT '[]';

-- CreateTable
CREATE TABLE "McpServer" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "url" TEXT NOT NULL,
    "headersCiphertext" TEXT,
    "headerNames" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "McpServer_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "McpServer_name_key" ON "McpServer"("name");
