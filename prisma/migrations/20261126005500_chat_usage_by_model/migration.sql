-- CreateTable
CREATE TABLE "ChatModelUsageDay" (
    "userId" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "model" VARCHAR(128) NOT NULL,
    "requests" INTEGER NOT NULL DEFAULT 0,
    "promptTokens" BIGINT NOT NULL DEFAULT 0,
    "completionTokens" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "ChatModelUsageDay_pkey" PRIMARY KEY ("userId","day","model")
);

-- CreateIndex
CREATE INDEX "ChatModelUsageDay_day_idx" ON "ChatModelUsageDay"("day");

-- AddForeignKey
ALTER TABLE "ChatModelUsageDay" ADD CONSTRAINT "ChatModelUsageDay_userId_fkey" FOREIGN KEY ("userId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;
