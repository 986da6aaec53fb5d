-- AlterTable
ALTER TABLE "ChatUser" ADD COLUMN     "customAssistants" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "preferredModel" VARCHAR(128);
