-- CreateTable
CREATE TABLE "ChatUsageDay" (
    "userId" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "promptTokens" BIGINT NOT NULL DEFAULT 0,
    "completionTokens" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "ChatUsageDay_pkey" PRIMARY KEY ("userId","day")
);

-- AddForeignKey
ALTER TABLE "ChatUsageDay" ADD CONSTRAINT "ChatUsageDay_userId_fkey" FOREIGN KEY ("userId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;
