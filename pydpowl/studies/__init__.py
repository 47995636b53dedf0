"""The paper's studies on top of the engine: simulation (Fig. 1), case study
(Table 1, Fig. 2), choice of gamma (Algorithm 2 and private alternatives),
gamma tables, utility bounds and plots. Nothing in the engine imports these."""
