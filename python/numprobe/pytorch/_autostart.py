"""Zero-code-change capture (NUMPROBE_CONFIG / `numprobe run`): the debugger is installed when
the process starts and records the training, not the set-up. Recording starts at the first forward
of a module that reaches an optimizer (or at the first forward when no optimizer exists yet), so
model construction (nn.init's fill_ and the like) is not recorded. Every optimizer.step() ends the
step (stop, step), and the next step starts at the next forward: no empty step folder is left
after the last step. The rank is taken when torch.distributed is initialised, so under mp.spawn
each process files its records under rank{R} from its first record. For L0/mix, the first module
called at top level is hooked as the model."""
import torch

from .debugger import PrecisionDebugger, _current_rank

_installed = None


class _Starter:
    """Starts the debugger at the forward that begins a training step."""

    def __init__(self, debugger):
        self.debugger = debugger
        self.optimized = {}  # id(parameter) -> parameter, of every optimizer's parameter groups
        self.steps_seen = 0  # optimizer steps so far

    def note_optimizer(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                self.optimized[id(p)] = p

    def reaches_optimizer(self, module):
        return any(id(p) in self.optimized for p in module.parameters())

    def before_forward(self, module):
        runtime = self.debugger._runtime
        if runtime.running:
            return
        # The first step begins with a module the optimizer trains (a frozen or auxiliary module
        # called during set-up does not start it); later steps begin with their first forward.
        if self.steps_seen == 0 and self.optimized and not self.reaches_optimizer(module):
            return
        self.debugger.start()

    def after_optimizer_step(self):
        self.steps_seen += 1
        if self.debugger._runtime.running:
            # Not stop(): a closed-loop config's compare and report come at exit, once.
            self.debugger._stop_recording()
            self.debugger.step()


def install(config_path):
    global _installed
    if _installed is not None:
        return _installed
    debugger = PrecisionDebugger(config_path=config_path)
    runtime = debugger._runtime
    starter = _Starter(debugger)

    def start_at_forward(module, args):
        if not runtime.running and not runtime.inner:
            starter.before_forward(module)

    # Registered before find_model, so that the forward that starts recording also finds its model.
    torch.nn.modules.module.register_module_forward_pre_hook(start_at_forward)
    if debugger.level in ("L0", "mix"):
        def find_model(module, args):
            # The first module called while no hooked module runs is a model root.
            if runtime.running and not runtime.module_stack and getattr(module, "_numprobe_prefix", None) is None \
                    and not any(module is r for r in runtime.model_roots):
                runtime.hook_model(module)

        torch.nn.modules.module.register_module_forward_pre_hook(find_model)

    original_init = torch.optim.Optimizer.__init__

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        starter.note_optimizer(self)
        cls = type(self)
        step = cls.step
        if getattr(step, "_numprobe_step", False):
            return

        def step_and_advance(opt, *a, **k):
            result = step(opt, *a, **k)
            starter.after_optimizer_step()
            return result

        step_and_advance._numprobe_step = True
        step_and_advance.hooked = True  # torch's profiler wrapper must not wrap it again
        cls.step = step_and_advance

    torch.optim.Optimizer.__init__ = init

    if torch.distributed.is_available():
        original_init_group = torch.distributed.init_process_group

        def init_process_group(*args, **kwargs):
            result = original_init_group(*args, **kwargs)
            rank = _current_rank()
            if rank is not None:
                debugger.dumper.set_rank(rank)  # renames what this process wrote as proc{pid}
            return result

        torch.distributed.init_process_group = init_process_group
    _installed = debugger
    return debugger
