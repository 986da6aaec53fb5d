-- AlterTable
ALTER TABLE "CreditPlan" ADD COLUMN     "disabled" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "models" TEXT[] DEFAULT ARRAY[]::TEXT[];

-- AlterTable
ALTER TABLE "CreditCodeBatch" ADD COLUMN     "planId" INTEGER;

-- AddForeignKey
ALTER TABLE "CreditCodeBatch" ADD CONSTRAINT "CreditCodeBatch_planId_fkey" FOREIGN KEY ("planId") REFERENCES "CreditPlan"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
