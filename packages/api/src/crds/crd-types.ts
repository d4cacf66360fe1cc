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

type PrinterColumn = NonNullable<
  CustomResourceDefinition['spec']['versions'][number]['additionalPrinterColumns']
>[number];

/**
 * A cells.cellfed.io/v1alpha1 CRD: one served and stored version with a status subresource, in the
 * `cellfed` category, labelled as part of cellfed. Only what differs per kind is passed in.
 */
export function cellfedCrd(options: {
  kind: string;
  plural: string;
  scope: 'Cluster' | 'Namespaced';
  printerColumns: PrinterColumn[];
  description: string;
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}): CustomResourceDefinition {
  const group = 'cells.cellfed.io';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${options.plural}.${group}`, labels: { 'app.kubernetes.io/part-of': 'cellfed' } },
    spec: {
      group,
      scope: options.scope,
      names: {
        kind: options.kind,
        listKind: `${options.kind}List`,
        plural: options.plural,
        singular: options.kind.toLowerCase(),
        categories: ['cellfed'],
      },
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            ...options.printerColumns,
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: options.description,
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: options.spec,
                status: options.status,
              },
            },
          },
        },
      ],
    },
  };
}
