import type { FactCategory } from '../../machines/memory/memory.port.ts';

/** A senior's stored facts (one of calibration/recall-pairs.fr.jsonl's seniors), for the recall floor's tests. */
export const RECALL_FACTS: ReadonlyArray<readonly [string, FactCategory]> = [
  ['Sa fille Claire habite à Lyon avec son mari', 'contacts'],
  ["Elle a un chat roux qui s'appelle Caramel", 'profil'],
  ['Elle prend un comprimé pour la tension chaque matin au petit déjeuner', 'sante'],
  ['Elle chante dans la chorale de la paroisse le jeudi après-midi', 'profil'],
  ['Elle porte des lunettes pour lire et les range dans le tiroir de la commode', 'profil'],
  ['Elle adore les mots croisés du journal local', 'profil'],
];
/** Turns none of them answers, and each gets nothing above the local embedder's floor. */
export const UNRELATED_TURNS = ['Quel temps fera-t-il demain ?', "J'ai bien dormi cette nuit", 'Raconte-moi une histoire'];
