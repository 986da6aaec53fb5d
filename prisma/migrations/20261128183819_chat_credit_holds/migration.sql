-- CreateTable
CREATE TABLE "CreditHold" (
    "requestId" VARCHAR(64) NOT NULL,
    "userId" INTEGER NOT NULL,
    "frozen" INTEGER NOT NULL,
    "conversationId" UUID,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CreditHold_pkey" PRIMARY KEY ("requestId")
);

-- CreateIndex
CREATE INDEX "CreditHold_createdAt_idx" ON "CreditHold"("createdAt");

-- AddForeignKey
ALTER TABLE "CreditHold" ADD CONSTRAINT "CreditHold_userId_fkey" FOREIGN KEY ("userId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;
