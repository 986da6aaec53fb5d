-- CreateEnum
CREATE TYPE "CreditPlanPeriod" AS ENUM ('day', 'month');

-- CreateTable
CREATE TABLE "CreditPlan" (
    "id" SERIAL NOT NULL,
    "name" VARCHAR(64) NOT NULL,
    "credits" INTEGER NOT NULL,
    "period" "CreditPlanPeriod" NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CreditPlan_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UserCreditPlan" (
    "userId" INTEGER NOT NULL,
    "planId" INTEGER NOT NULL,
    "assignedAt" TIMESTAMPTZ(3) NOT NULL,
    "assignedBy" INTEGER,
    "nextTopUpAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "UserCreditPlan_pkey" PRIMARY KEY ("userId")
);

-- CreateIndex
CREATE UNIQUE INDEX "CreditPlan_name_key" ON "CreditPlan"("name");

-- CreateIndex
CREATE INDEX "UserCreditPlan_nextTopUpAt_idx" ON "UserCreditPlan"("nextTopUpAt");

-- CreateIndex
CREATE INDEX "UserCreditPlan_planId_idx" ON "UserCreditPlan"("planId");

-- AddForeignKey
ALTER TABLE "UserCreditPlan" ADD CONSTRAINT "UserCreditPlan_userId_fkey" FOREIGN KEY ("userId") REFERENCES "ChatUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserCreditPlan" ADD CONSTRAINT "UserCreditPlan_planId_fkey" FOREIGN KEY ("planId") REFERENCES "CreditPlan"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
