/**
 * Questions the semantic cache never answers and never stores: health, medication, symptoms and
 * care. « Je peux prendre mon cachet maintenant ? » depends on the hour, the prescription and what
 * was said a minute ago; a reply written for another moment, served with confidence to an elderly
 * person, is a harm no hit rate pays for. A closed lexicon, aligned with what the `sante` consent
 * category holds (conditions, treatments, carers, appointments), plus dosage and time-of-intake words.
 * Pure and cheap: one regex over the normalised question.
 */
import { normalizeQuestion } from '../french/words.ts';

/**
 * Words that make a question about health wherever they stand, written accent-folded (the
 * question is folded before the match); a trailing `s`/`x` (plural) or `nt` (a verb's third person
 * plural: « mes chevilles enflent ») is accepted after each.
 */
const HEALTH_WORDS = [
  // medication and dosage
  'medicament', 'cachet', 'comprime', 'pilule', 'gelule', 'traitement', 'remede', 'ordonnance', 'posologie', 'dose', 'dosage',
  'milligramme', 'mg', 'goutte', 'sirop', 'pommade', 'suppositoire', 'piqure', 'injection', 'insuline', 'antibiotique', 'vaccin',
  'vaccination', 'somnifere', 'anticoagulant', 'antidouleur', 'anti douleur', 'doliprane', 'paracetamol', 'aspirine', 'ibuprofene',
  'a jeun', 'pilulier', 'patch', 'inhalateur', 'ventoline',
  // conditions and symptoms
  'sante', 'malade', 'maladie', 'malaise', 'douleur', 'douloureux', 'douloureuse', 'souffre', 'souffres', 'souffrir', 'souffert',
  'fievre', 'toux', 'tousse', 'tousses', 'tousser', 'rhume', 'grippe', 'covid', 'vertige', 'nausee', 'vomir', 'vomi', 'diarrhee',
  'constipe', 'constipee', 'constipation', 'essouffle', 'essoufflee', 'essoufflement', 'palpitation', 'saigne', 'saigner',
  'saignement', 'plaie', 'blessure', 'blesse', 'blessee', 'brulure', 'infection', 'allergie', 'allergique', 'asthme', 'cardiaque',
  'avc', 'cancer', 'tumeur', 'diabete', 'diabetique', 'glycemie', 'cholesterol', 'tension', 'hypertension', 'arthrose', 'rhumatisme',
  'migraine', 'insomnie', 'boiter', 'boitais', 'boitait', 'enfle', 'enflee', 'enflees', 'gonfle', 'gonflee', 'gonflees',
  'picotement', 'fourmillement', 'evanoui', 'evanouie',
  // care and carers
  'medecin', 'docteur', 'toubib', 'generaliste', 'infirmier', 'infirmiere', 'kine', 'kinesitherapeute', 'pharmacie', 'pharmacien',
  'pharmacienne', 'dentiste', 'cardiologue', 'ophtalmo', 'ophtalmologue', 'dermatologue', 'specialiste', 'aide soignante',
  'pedicure', 'podologue', 'orthophoniste', 'osteopathe', 'audioprothesiste', 'orthoptiste', 'rhumatologue', 'neurologue',
  'geriatre', 'radiologue', 'ergotherapeute',
  'aide soignant', 'pansement', 'soin', 'soigner', 'soigne', 'hopital', 'hopitaux', 'hospitalise', 'hospitalisee', 'urgences',
  'clinique', 'ambulance', 'samu', 'operation', 'opere', 'operee', 'chirurgie', 'chirurgien', 'radiographie', 'scanner', 'irm',
  'prise de sang', 'analyse de sang', 'analyses de sang', 'sang',
];

/** Phrases whose words are everyday words elsewhere: « j'ai mal », « ça me fait mal », « la tête qui tourne », « j'ai de la température ». */
const HEALTH_PHRASES = [
  '(?:ai|as|a|avez|avons|ont|avais|avait) (?:tres |si |trop |un peu |encore |toujours |vraiment |souvent )?mal(?! a (?:dormir|comprendre|entendre|lire|trouver|marcher))',
  '(?:fait|font|fais|faisait) (?:tres |si |trop |un peu |encore |toujours |vraiment )?mal',
  'mal (?:a|au|aux) (?:la |l )?(?:tete|dos|ventre|coeur|gorge|dents?|genoux?|jambes?|pieds?|bras|epaules?|hanches?|yeux|oreilles?|estomac|poitrine|mains?|nuque|cou)',
  // « je boite » limps; « la boîte » is a box.
  '(?:je|tu|il|elle) boite', 'tete qui tourne', '(?:ai|as|a|avez) de la temperature', 'par voie orale',
  '(?:suis|es|est|sommes|etes|sont) tombee?s?', 'je (?:suis|me suis) (?:fait|faite) mal',
];

const PATTERN = new RegExp(
  `(?:^| )(?:${[...HEALTH_WORDS.map((w) => `${w}(?:[sx]|nt)?`), ...HEALTH_PHRASES].join('|')})(?= |$)`,
);

/** True when the question is about health, medication, symptoms or care: never from the cache, never into it. */
export function isHealthQuestion(question: string): boolean {
  // « par cœur » (by heart) is memory, not the heart.
  return PATTERN.test(normalizeQuestion(question).replace(/\bpar coeur\b/g, ' '));
}
