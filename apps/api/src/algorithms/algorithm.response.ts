import { ApiProperty } from '@nestjs/swagger';

export class AlgorithmResponse {
  @ApiProperty({ example: 'sha256' })
  name: string;

  @ApiProperty({
    description: 'Digest length in bytes (default output length of an XOF)',
    example: 32,
  })
  digestLength: number;

  @ApiProperty({ description: 'Block size or sponge rate in bytes', example: 64 })
  blockSize: number;

  @ApiProperty({ description: 'Extendable output: accepts outputLength' })
  xof: boolean;

  @ApiProperty({ description: 'Accepts a customization string' })
  customizable: boolean;

  @ApiProperty({ example: 'FIPS 180-4' })
  standard: string;

  @ApiProperty({ description: 'Code path chosen at load time on this machine', example: 'sha-ni' })
  implementation: string;
}

export class AlgorithmListResponse {
  @ApiProperty({ type: [AlgorithmResponse] })
  items: AlgorithmResponse[];
}
