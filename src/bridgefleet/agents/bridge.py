"""The per-bridge agent: one Q-network shared by every bridge of a fleet of any size.

Each bridge is seen through its own features and the context of its agency and year (parameter sharing
across bridges, as in IMP-MARL: Leroy et al., NeurIPS 2023 Datasets and Benchmarks). The network gives
Q over the 5 actions for one bridge; a fleet's decision is its agency budgets split by
:func:`bridgefleet.planning.knapsack.allocate` on each bridge's benefit Q(a) − Q(0), the same rule the
``lagrangian`` planner uses with its DP values. The price of money is not an input: this year's budget is
met exactly by the knapsack, and later years' scarcity is in Q itself, which is learned for the policy
that allocates (SARSA targets on the next year's funded action, Rummery & Niranjan 1994), so a bridge's
Q(0) already accounts for how often it will be funded later.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from bridgefleet.agents.learner import DQNLearner
from bridgefleet.config.training import TrainConfig
from bridgefleet.planning.knapsack import agencies, fund
from bridgefleet.sim.simulator import AGE_SCALE, COND_SCALE, RATE_SCALE, YSM_SCALE, FleetSimulator

N_FEATURES = 14
"""Per-bridge input: rating/9, age/100, ysm/30, rate/0.05, AADT weight, target rating/9, cluster (0 urban, 1 rural:
the column's, as the urban and rural agencies were before an inventory's owners held the budgets), years left /
horizon, agency budget available / annual budget (capped at 3), cost of actions 1–4 / annual budget of the agency
(capped at 10), log(1 + the bridge's yearly user cost while poor / the agency's annual budget per bridge); the agency
is the one whose money pays the bridge (:attr:`FleetSimulator.agency`: urban or rural, or its owner). Networks of runs
with ``user_cost_feature`` off (and of every run before it) read the first :data:`BASE_FEATURES`."""
BASE_FEATURES = 13
"""The inputs without the user cost (runs before ``user_cost_feature``)."""
LEVEL_FEATURES = N_FEATURES + 1
"""With ``budget_level_feature``: after the :data:`N_FEATURES`, the budget level of the bridge's agency, log(the
cost of replacing every bridge of the agency / its annual budget) / 5 (log(75) / 5 ≈ 0.86 where a year's budget
replaces 1/75 of the agency's bridges), the same for every bridge of an agency and year. The teacher's benefits
(and the scarcity of money behind them) move with the budget level, which the cost-to-budget inputs mix with the
bridge's own size: a bridge twice as large at twice the budget reads the same there."""
COMPONENT_FEATURES = LEVEL_FEATURES + 5
"""With ``component_features``: after the :data:`LEVEL_FEATURES`, the deck, superstructure and substructure ratings
/ 9 (a culvert's rating in the deck slot, its other two 9: :data:`bridgefleet.sim.components.SLOTS`), the deck's
protection (1 while a preservation protects it, else 0) and the bridge's kind (0 bridge, 1 culvert). The inputs
before them give only the lowest rating and its expected drop, while the teacher's benefits of each treatment
depend on which component is low and whether the deck is protected. On the continuous model (no components) the
three read the condition / 9 and the other two 0."""
BUDGET_FEATURE_CAP = 3.0
RATING_RAMPS = tuple(2.0 + 0.5 * k for k in range(14))
"""Rating points where the ramps of ``rating_ramps`` start (2.0, 2.5, …, 8.5): ramp k reads min(max((rating − k) /
:data:`RAMP_WIDTH`, 0), 1), so the 14 ramps code the rating as a soft thermometer, one more input per half rating
point (a piecewise-linear coarse coding, Sutton & Barto 2018, §9.5.3, of the input the value is most uneven in:
the user cost below rating 5, the condition bands). Below 2.0 every ramp reads 0 and the rating itself tells."""
RAMP_WIDTH = 0.5
"""Width of each ramp of :data:`RATING_RAMPS`, rating points."""
COST_INPUTS = slice(9, 13)
"""The inputs cost of actions 1–4 / the agency's annual budget, which ``input_scaling`` also reads as logs."""
LOG_COST_FLOOR = 1e-3
"""Added to a cost-to-budget input before its log (a treatment costing a thousandth of its agency's year)."""
INPUT_STD_FLOOR = 0.05
"""Least s.d. an input is divided by in ``input_scaling`` (one nearly constant on the rows, e.g. dc-2019's single
rural bridge's agency input, is centred, not stretched past 20 ×)."""


def action_costs(sim: FleetSimulator) -> np.ndarray:
    """USD cost of each action for each bridge, float64 (E, B, 5) (deck area × cost factor × unit cost)."""
    size = np.asarray(sim.profile.deck_area, dtype=np.float64) * np.asarray(sim.profile.cost_factor)
    size = np.broadcast_to(size, (sim.num_envs, sim.n_bridges))
    return size[..., None] * np.asarray(sim.unit_costs, dtype=np.float64)


def agency_of(sim: FleetSimulator) -> np.ndarray:
    """int64 (B,): each bridge's agency, the one whose budget pays it (:attr:`FleetSimulator.agency`: 0 for the
    urban bridges, the first n_urban columns, and 1 for the rural ones, unless an inventory's owners hold the
    budgets)."""
    return sim.agency


def bridge_features(sim: FleetSimulator, cost: np.ndarray, n_features: int = N_FEATURES) -> np.ndarray:
    """float32 (E, B, n_features) features of every bridge now: the first ``n_features`` (:data:`BASE_FEATURES`,
    :data:`N_FEATURES`, :data:`LEVEL_FEATURES` or :data:`COMPONENT_FEATURES`) of those :data:`N_FEATURES`,
    :data:`LEVEL_FEATURES` and :data:`COMPONENT_FEATURES` list;
    ``cost``: float64 (E, B, 5) USD (:func:`action_costs`)."""
    s, p = sim.state, sim.profile
    e_n, b_n = sim.num_envs, sim.n_bridges
    ag = agency_of(sim)
    annual = sim.fleet_annual_budget
    per_bridge = np.maximum(annual[:, ag], 1.0)  # (E, B)
    f = np.empty((e_n, b_n, n_features), dtype=np.float32)
    f[..., 0] = s.condition / COND_SCALE
    f[..., 1] = s.age / AGE_SCALE
    f[..., 2] = s.ysm / YSM_SCALE
    f[..., 3] = s.rate / RATE_SCALE
    f[..., 4] = sim.weight
    f[..., 5] = np.broadcast_to(p.target_condition, (e_n, b_n)) / COND_SCALE
    f[..., 6] = agencies(b_n, sim.n_urban)  # the cluster, 0 urban and 1 rural (= the agency where those are two)
    f[..., 7] = ((sim.config.horizon_years - sim.t) / sim.config.horizon_years)[:, None]
    # Capped: with carry-over an unspent budget grows year by year; past a few annual budgets it no longer
    # limits one bridge, and an unbounded input would ask the network to extrapolate (measured: +10 points).
    f[..., 8] = np.minimum(sim.budget[:, ag] / per_bridge, BUDGET_FEATURE_CAP)
    f[..., 9:13] = np.minimum(cost[..., 1:] / per_bridge[..., None], 10.0)
    if n_features == BASE_FEATURES:
        return f
    # What a poor year costs its users (AADT × truck share × detour: NBI items 29, 109, 19) varies 1,000-fold
    # across an inventory and is not a function of the other inputs. Against the agency's budget per bridge, so
    # the same bridge reads the same in a fleet of 100 or of 4,794; log, as it spans five orders of magnitude.
    n_agency = np.bincount(ag, minlength=sim.n_agencies)[ag]  # (B,) bridges of the bridge's agency
    f[..., 13] = np.log1p(sim.user_cost * n_agency / per_bridge)
    if n_features == N_FEATURES:
        return f
    onehot = (ag[:, None] == np.arange(sim.n_agencies)).astype(np.float64)  # (B, A): sums over each agency's bridges
    replace_all = np.maximum(cost[..., 4] @ onehot, 1.0)  # (E, A) USD
    f[..., 14] = (np.log(replace_all / np.maximum(annual, 1.0)) / 5.0)[:, ag]
    if n_features == LEVEL_FEATURES:
        return f
    if sim.components_model is None:
        f[..., 15:18] = (s.condition / COND_SCALE)[..., None]
        f[..., 18:20] = 0.0
        return f
    f[..., 15:18] = sim.components / COND_SCALE
    f[..., 18] = sim.protected
    f[..., 19] = np.broadcast_to(sim.kind, (e_n, b_n))
    return f


ROWS_PER_PASS = 8192
"""Bridges the network reads in one pass; more (16 Indiana fleets: 76,704 a year) go in blocks of this many, the
same Q within float32 rounding (to the bit on an Intel Xeon with AMX; on an AMD EPYC a few values differ in their
last bit, as the matrix kernels sum in another order for another row count): a block's 192-wide activations (6 MB
in fp32) stay near the cache, the whole batch's (59 MB) do not. Measured on 76,704 rows, one thread (Intel Xeon
with AMX): fp32 150 → 63 ms, bf16 autocast 97 → 30 ms (2,048 rows a block: 65 / 34 ms; 16,384: 93 / 30 ms)."""


class BridgeQNetwork(nn.Module):
    """MLP from one bridge's features to Q over the 5 actions; ``dueling`` splits it into V + A − mean(A)
    (Wang et al., ICML 2016), with one V per bridge since every sample is one bridge. With ``rating_ramps`` the
    torso also reads the rating (input 0, rating / 9) as the ramps of :data:`RATING_RAMPS`, computed here, so the
    replay stores the features alone. With ``input_scaling`` it also reads the four cost-to-budget inputs as logs
    (log(x + :data:`LOG_COST_FLOOR`): on dc-2019 they span three orders of magnitude, most of them below 0.05) and
    standardises every input it reads: (x − mean) / s.d. over the rows it is first fitted on
    (:meth:`set_input_scale`; saved with the weights, as buffers ``input_mean``, ``input_std``).

    Input float32 (N, n_features); output float32 (N, 5).
    """

    def __init__(self, hidden: tuple[int, ...] = (128, 128), dueling: bool = False, n_features: int = N_FEATURES,
                 rating_ramps: bool = False, input_scaling: bool = False):
        super().__init__()
        self.n_features = n_features
        """Inputs read: the first n_features of :func:`bridge_features`."""
        self.rating_ramps = rating_ramps
        # the ramps' starts on the input's scale (rating / 9), only where they are read; not saved (a run's weights
        # keep their names)
        self.register_buffer("ramp_starts", torch.tensor(RATING_RAMPS) / COND_SCALE if rating_ramps else None,
                             persistent=False)
        self.input_scaling = input_scaling
        n_logs = len(range(n_features)[COST_INPUTS]) if input_scaling else 0
        width = n_features + (len(RATING_RAMPS) if rating_ramps else 0) + n_logs
        self.register_buffer("input_mean", torch.zeros(width) if input_scaling else None)
        self.register_buffer("input_std", torch.ones(width) if input_scaling else None)
        layers: list[nn.Module] = []
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU(inplace=True)]  # in place: 6 % faster update (AVX2 fp32)
            width = h
        self.torso = nn.Sequential(*layers)
        self.dueling = dueling
        self.head = nn.Linear(width, 5)
        self.value = nn.Linear(width, 1) if dueling else None

    def ramps(self, x: torch.Tensor) -> torch.Tensor:
        """The rating's ramps float32 (N, 14) of features x float32 (N, n_features), each in [0, 1]."""
        return ((x[..., :1] - self.ramp_starts) * (COND_SCALE / RAMP_WIDTH)).clamp(0.0, 1.0)

    def inputs(self, x: torch.Tensor) -> torch.Tensor:
        """What the torso reads of features x float32 (N, n_features), before standardisation: the features, the
        rating's ramps (``rating_ramps``) and the cost-to-budget inputs' logs (``input_scaling``)."""
        if self.rating_ramps:
            x = torch.cat([x, self.ramps(x)], dim=-1)
        if self.input_scaling:
            x = torch.cat([x, torch.log(x[..., COST_INPUTS].clamp_min(0.0) + LOG_COST_FLOOR)], dim=-1)
        return x

    @torch.no_grad()
    def set_input_scale(self, x: torch.Tensor) -> None:
        """Standardise the inputs as on rows x float32 (N, n_features) (each input's mean and s.d., the s.d. at
        least :data:`INPUT_STD_FLOOR`). Raises ValueError without ``input_scaling``."""
        if not self.input_scaling:
            raise ValueError("this network was built without input_scaling")
        z = self.inputs(x.to(self.input_mean.device))
        self.input_mean.copy_(z.mean(0))
        self.input_std.copy_(z.std(0).clamp_min(INPUT_STD_FLOOR))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] > ROWS_PER_PASS:  # a fleet's bridges at once: in blocks whose activations stay in cache
            return torch.cat([self._q(part) for part in x.split(ROWS_PER_PASS)])
        return self._q(x)

    def _q(self, x: torch.Tensor) -> torch.Tensor:
        x = self.inputs(x)
        if self.input_scaling:
            x = (x - self.input_mean) / self.input_std
        z = self.torso(x)
        q = self.head(z).float()  # Q in fp32 even under autocast: argmax and targets compare close values
        if self.value is not None:
            q = self.value(z).float() + q - q.mean(dim=-1, keepdim=True)
        return q


def decide(q: np.ndarray, cost: np.ndarray, sim: FleetSimulator, explore: np.ndarray | None = None,
           random_action: np.ndarray | None = None) -> np.ndarray:
    """Actions int64 (E, B): the knapsack on benefits Q(a) − Q(0) (q float (E, B, 5)) within each agency's
    budget; where ``explore`` (bool (E, B)) is set, the bridge asks for ``random_action`` instead (funded
    first if it fits)."""
    ben = np.asarray(q, dtype=np.float64) - np.asarray(q[..., :1], dtype=np.float64)
    if explore is not None and explore.any():
        forced = np.where(np.arange(5) == random_action[..., None], 1e12, -np.inf)
        forced[..., 0] = 0.0
        ben = np.where(explore[..., None], forced, ben)
    return fund(ben, cost, sim.agency, sim.budget)


def scaled_benefit(ben: np.ndarray, cost: np.ndarray, cost_lambda: float) -> np.ndarray:
    """What a network distilled from a planner learns (``teacher``): asinh(benefit / (λ · cost)), float32 (E, B, 5),
    of benefits ben float64 (E, B, 5) in return units (−inf: not available) and costs float64 (E, B, 5) USD, λ the
    fleet's ``cost_lambda`` (return units per USD). A benefit per cost-equivalent USD is what the knapsack ranks
    treatments by, and it spans the same range on any inventory (a busy bridge's benefit spans 1,000 × a quiet
    one's); asinh keeps its sign and compresses the tails. NaN where the action is not available; 0 for doing
    nothing and for a free action."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(cost > 0, ben / (cost * cost_lambda), 0.0)
    out = np.arcsinh(ratio).astype(np.float32)
    out[np.isneginf(ben)] = np.nan
    out[..., 0] = 0.0
    return out


def unscaled_benefit(z: np.ndarray, cost: np.ndarray, cost_lambda: float) -> np.ndarray:
    """Benefits float64 (E, B, 5) in return units, 0 for doing nothing, from a distilled network's output z float32
    (E, B, 5) (its differences z_a − z_0 read as :func:`scaled_benefit`) and costs float64 (E, B, 5) USD."""
    z = np.asarray(z, dtype=np.float64)
    return np.sinh(z - z[..., :1]) * cost * cost_lambda


class BridgePolicy:
    """A trained per-bridge network as a policy for :func:`bridgefleet.evaluation.evaluate.evaluate_policy` (greedy):
    returns requests int64 (E, B) that fit each agency's budget.

    ``distilled``: the network was fitted to a planner's benefits (:func:`scaled_benefit`, a run with ``teacher``),
    not to Q; its output is read back with :func:`unscaled_benefit` before the knapsack.
    """

    def __init__(self, net: nn.Module, device: torch.device | str = "cpu", distilled: bool = False):
        self.net = net
        self.device = torch.device(device)
        self.distilled = distilled

    @torch.no_grad()
    def q_values(self, feats: np.ndarray) -> np.ndarray:
        """Q float32 (E, B, 5) of :func:`bridge_features` float32 (E, B, ≥ the network's n_features) (the network
        reads its first n_features)."""
        n_in = self.net.n_features
        x = torch.from_numpy(np.ascontiguousarray(feats[..., :n_in]).reshape(-1, n_in)).to(self.device)
        return self.net(x).cpu().numpy().reshape(*feats.shape[:2], 5)

    def benefits_and_costs(self, sim: FleetSimulator) -> tuple[np.ndarray, np.ndarray]:
        """(each action's benefit over doing nothing now float64 (E, B, 5) return units, as the network reads it;
        its cost float64 (E, B, 5) USD)."""
        cost = action_costs(sim)
        q = self.q_values(bridge_features(sim, cost, self.net.n_features))
        if self.distilled:
            return unscaled_benefit(q, cost, sim.config.cost_lambda), cost
        q = np.asarray(q, dtype=np.float64)
        return q - q[..., :1], cost

    def __call__(self, sim: FleetSimulator, rng: np.random.Generator | None = None) -> np.ndarray:
        return fund(*self.benefits_and_costs(sim), sim.agency, sim.budget)


def n_features(cfg: TrainConfig) -> int:
    """Inputs of the run's network: :data:`COMPONENT_FEATURES` with ``component_features`` (they follow the budget
    level and the user cost, which it then reads too), :data:`LEVEL_FEATURES` with ``budget_level_feature``,
    :data:`N_FEATURES` with ``user_cost_feature``, else :data:`BASE_FEATURES`."""
    if cfg.component_features:
        return COMPONENT_FEATURES
    if cfg.budget_level_feature:
        return LEVEL_FEATURES
    return N_FEATURES if cfg.user_cost_feature else BASE_FEATURES


def build_learner(cfg: TrainConfig, amp: bool | None = None) -> DQNLearner:
    """The per-bridge learner of a run: a :class:`BridgeQNetwork` of ``cfg.bridge_hidden`` with SARSA targets
    (the next year's funded action), seeded by ``cfg.seed``; ``amp`` as resolved for this machine."""
    torch.manual_seed(cfg.seed)
    n_in = n_features(cfg)
    return DQNLearner(lambda: BridgeQNetwork(cfg.bridge_hidden, cfg.dueling, n_in, cfg.rating_ramps,
                                             cfg.input_scaling),
                      cfg.learner_config(cfg.bridge_hidden, amp, target="sarsa"))
