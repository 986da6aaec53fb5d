-- AlterTable
ALTER TABLE "ChatUser" ADD COLUMN     "inviteCode" VARCHAR(16);

-- CreateTable
CREATE TABLE "CreditInvitation" (
    "inviteeId" INTEGER NOT NULL,
    "inviterId" INTEGER NOT NULL,
    "address" VARCHAR(64) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "settledAt" TIMESTAMPTZ(3),
    "rewarded" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "CreditInvitation_pkey" PRIMARY KEY ("inviteeId")
);

-- CreateIndex
CREATE INDEX "CreditInvitation_inviterId_address_idx" ON "CreditInvitation"("inviterId", "address");

-- CreateIndex
CREATE UNIQUE INDEX "ChatUser_inviteCode_key" ON "ChatUser"("inviteCode");

-- AddForeignKey
ALTER TABLE "CreditInvitation" ADD CONSTRAINT "CreditInvitation_inviteeId_fkey" FOREIGN KEY ("inviteeId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;
