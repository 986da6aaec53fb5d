import { ApiProperty } from '@nestjs/swagger';
import { IMAGE_TYPES, type ImageType } from './image-type.js';

export class AttachmentResponse {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ enum: IMAGE_TYPES }) mediaType!: ImageType;
  @ApiProperty({ description: 'Size in bytes' }) byteSize!: number;
  @ApiProperty({
    example: '/api/attachments/0b5c6c8e-2d4e-4f55-9a2b-1f0c3d4e5f60',
    description: 'Where its owner reads the image (with their session)',
  })
  url!: string;
}

/** What the composer checks before uploading; the server enforces the same. */
export class AttachmentLimitsResponse {
  @ApiProperty({ enum: IMAGE_TYPES, isArray: true }) mediaTypes!: ImageType[];
  @ApiProperty() bytesPerImage!: number;
  @ApiProperty() imagesPerMessage!: number;
  @ApiProperty() bytesPerMessage!: number;
}
