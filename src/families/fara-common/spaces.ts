// The two Fara action spaces by name (for code that works on Fara's own formats: the viewer, tests, benchmarks).
import type { FaraName, FaraSpace } from '../../actions/fara';
import type { Fara15Action, Fara7bAction } from '../../actions/schemas';
import { FARA15_SPACE } from '../fara-1.5/family';
import { FARA7B_SPACE } from '../fara-7b/family';

export function faraSpace(name: 'fara-1.5'): FaraSpace<Fara15Action>;
export function faraSpace(name: 'fara-7b'): FaraSpace<Fara7bAction>;
export function faraSpace(name: FaraName): FaraSpace;
export function faraSpace(name: FaraName): FaraSpace {
  return name === 'fara-1.5' ? FARA15_SPACE : FARA7B_SPACE;
}
