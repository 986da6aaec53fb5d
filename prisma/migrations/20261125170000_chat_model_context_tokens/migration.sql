-- AlterTable
ALTER TABLE "ChatModel" ADD COLUMN     "contextTokens" INTEGER;
