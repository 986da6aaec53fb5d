-- AlterTable
ALTER TABLE "Channel" ADD COLUMN     "firstByteTimeoutMs" INTEGER;
