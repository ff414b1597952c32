import { ValidateIf } from 'class-validator';

/**
 * A body field that may be left out but, when given, is validated: unlike class-validator's
 * IsOptional, null is not taken for "absent" (`"priority": null` is a 400, not the default).
 */
export function IsOptionalNotNull(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}
