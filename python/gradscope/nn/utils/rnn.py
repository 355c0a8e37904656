"""gradscope.nn.utils.rnn: padding variable-length sequences, as torch.nn.utils.rnn's."""
from gradscope._missing import unsupported

__getattr__ = unsupported(__name__)
