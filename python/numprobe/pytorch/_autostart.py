"""Zero-code-change capture (NUMPROBE_CONFIG / `numprobe run`): the debugger starts when the
process starts, hooks the first module called at top level as the model (for L0/mix), and
advances steps on every optimizer.step() (stop, step, start), so an unmodified script is dumped."""
import torch

from .debugger import PrecisionDebugger

_installed = None


def install(config_path):
    global _installed
    if _installed is not None:
        return _installed
    debugger = PrecisionDebugger(config_path=config_path)
    runtime = debugger._runtime
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
        cls = type(self)
        step = cls.step
        if getattr(step, "_numprobe_step", False):
            return

        def step_and_advance(opt, *a, **k):
            result = step(opt, *a, **k)
            debugger.stop()
            debugger.step()
            debugger.start()
            return result

        step_and_advance._numprobe_step = True
        step_and_advance.hooked = True  # torch's profiler wrapper must not wrap it again
        cls.step = step_and_advance

    torch.optim.Optimizer.__init__ = init
    debugger.start()
    _installed = debugger
    return debugger
