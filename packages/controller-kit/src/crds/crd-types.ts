/** The parts of apiextensions.k8s.io/v1 CustomResourceDefinition the generated manifests use. */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    scope: 'Cluster' | 'Namespaced';
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      categories?: string[];
      shortNames?: string[];
    };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: Record<string, never> };
      additionalPrinterColumns?: { name: string; type: string; jsonPath: string; priority?: number }[];
      schema: { openAPIV3Schema: Record<string, unknown> };
    }[];
  };
}
