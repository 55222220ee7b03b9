import type { Rule } from 'eslint';
export declare const downwardOnly: Rule.RuleModule;
