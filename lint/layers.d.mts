export declare const LAYERS: readonly (readonly string[])[];
export declare const LAYER_OF: ReadonlyMap<string, number>;
export declare function unitOf(pathInSrc: string): string;
