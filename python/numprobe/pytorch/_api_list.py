"""Which PyTorch APIs are wrapped at L1/mix, by msprobe prefix, and their risk class.

The sets list compute operators; bookkeeping calls (zero_, requires_grad_, detach, size, item,
view, contiguous, backward), random samplers and tensor factories that read no tensor are left
out, so that the names and call counts of a dump line up with msprobe's. Names that a torch build
lacks are skipped when wrapping.
"""

_UNARY_MATH = """abs absolute acos acosh arccos arccosh arcsin arcsinh arctan arctanh asin asinh atan
atanh ceil cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 fix floor frac i0 lgamma log
log10 log1p log2 logit nan_to_num neg negative rad2deg reciprocal round rsqrt sgn sigmoid sign sin
sinc sinh sqrt square tan tanh trunc relu""".split()

_BINARY_MATH = """add addcdiv addcmul arctan2 atan2 copysign div divide float_power floor_divide fmod
gcd heaviside hypot igamma igammac lcm ldexp lerp logaddexp logaddexp2 mul multiply nextafter pow
remainder sub subtract true_divide xlogy fmax fmin maximum minimum""".split()

_COMPARE = """eq ne ge gt le lt greater greater_equal less less_equal not_equal equal isclose
allclose isfinite isinf isnan isneginf isposinf isreal signbit logical_and logical_not logical_or
logical_xor bitwise_and bitwise_not bitwise_or bitwise_xor""".split()

_REDUCE = """all amax amin aminmax any argmax argmin count_nonzero cummax cummin cumprod cumsum
logcumsumexp logsumexp max mean median min mode nanmean nanmedian nanquantile nansum norm prod
quantile std sum var kthvalue topk sort argsort msort unique unique_consecutive histc bincount
diff dist renorm""".split()

_LINALG = """addbmm addmm addmv addr baddbmm bmm chain_matmul cholesky cholesky_inverse cholesky_solve
det dot ger inner inverse kron logdet matmul matrix_exp matrix_power mm mv outer pinverse qr slogdet
svd tensordot triangular_solve vdot einsum cross cdist""".split()

_SHAPE = """broadcast_to chunk diag diag_embed diagflat diagonal diagonal_scatter dsplit expand expand_as
flatten flip fliplr flipud gather hsplit index_add index_copy index_fill index_put index_select
masked_fill masked_scatter masked_select movedim moveaxis narrow narrow_copy nonzero permute ravel
repeat repeat_interleave reshape reshape_as roll rot90 scatter scatter_add select slice_scatter
split split_with_sizes squeeze swapaxes swapdims t take take_along_dim tensor_split tile transpose
tril triu unbind unflatten unfold unsqueeze vsplit where clamp clamp_max clamp_min clip
argwhere type_as view_as""".split()

_CAST = "to float double half bfloat16 int long short char byte bool cfloat".split()

# Tensor-only methods, including the in-place variants of the math above and the dunders.
_TENSOR_ONLY = """__add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__
__truediv__ __rtruediv__ __itruediv__ __div__ __rdiv__ __idiv__ __floordiv__ __rfloordiv__
__ifloordiv__ __mod__ __rmod__ __imod__ __pow__ __rpow__ __ipow__ __matmul__ __rmatmul__ __and__
__rand__ __iand__ __or__ __ror__ __ior__ __xor__ __rxor__ __ixor__ __lshift__ __ilshift__
__rshift__ __irshift__ __eq__ __ne__ __ge__ __gt__ __le__ __lt__ __neg__ __invert__ __setitem__
add_ sub_ mul_ div_ addcdiv_ addcmul_ addmm_ addbmm_ baddbmm_ addmv_ addr_ clamp_ clamp_max_
clamp_min_ clip_ copysign_ pow_ exp_ log_ sqrt_ rsqrt_ sigmoid_ tanh_ relu_ neg_ abs_ fill_
masked_fill_ masked_scatter_ index_add_ index_copy_ index_fill_ index_put_ scatter_ scatter_add_
lerp_ fmod_ remainder_ floor_ ceil_ round_ trunc_ frac_ reciprocal_ squeeze_ unsqueeze_ t_
transpose_ tril_ triu_ nan_to_num_ square_ sin_ cos_ erf_ expm1_ log1p_ log2_ log10_ sign_
logical_not_ logical_and_ logical_or_ true_divide_ floor_divide_ hypot_ xlogy_ logit_
numpy stride softmax log_softmax prelu hardshrink sum_to_size""".split()

# torch.* functions that have no Tensor method of the same name.
_TORCH_ONLY = """cat concat concatenate stack hstack vstack dstack column_stack row_stack
atleast_1d atleast_2d atleast_3d block_diag broadcast_tensors cartesian_prod combinations
bilinear conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d
convolution batch_norm group_norm instance_norm layer_norm native_batch_norm native_layer_norm
native_group_norm embedding embedding_bag dropout alpha_dropout feature_dropout
feature_alpha_dropout softmax log_softmax relu_ selu celu prelu rrelu threshold hardshrink
pixel_shuffle pixel_unshuffle channel_shuffle pdist cosine_similarity pairwise_distance
max_pool1d max_pool2d max_pool3d avg_pool1d adaptive_avg_pool1d adaptive_max_pool1d
ctc_loss kl_div poisson_nll_loss binary_cross_entropy_with_logits cosine_embedding_loss
hinge_embedding_loss margin_ranking_loss triplet_margin_loss full full_like arange linspace
logspace eye tril_indices triu_indices clone constant_pad_nd cumulative_trapezoid trapz
searchsorted bucketize polar real vander var_mean std_mean frobenius_norm nuclear_norm
rsub scalar_tensor lstm gru lstm_cell gru_cell""".split()

_FUNCTIONAL = """conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d conv_tbc
avg_pool1d avg_pool2d avg_pool3d max_pool1d max_pool2d max_pool3d max_pool1d_with_indices
max_pool2d_with_indices max_pool3d_with_indices max_unpool1d max_unpool2d max_unpool3d lp_pool1d
lp_pool2d adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d adaptive_avg_pool1d
adaptive_avg_pool2d adaptive_avg_pool3d fractional_max_pool2d fractional_max_pool3d dropout
dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout threshold threshold_ relu relu_
glu hardtanh hardtanh_ relu6 elu elu_ selu selu_ celu celu_ leaky_relu leaky_relu_ prelu rrelu
rrelu_ logsigmoid gelu hardshrink tanhshrink softsign softplus softmin softmax gumbel_softmax
log_softmax softshrink tanh sigmoid hardsigmoid silu mish hardswish linear bilinear embedding
embedding_bag batch_norm instance_norm layer_norm group_norm local_response_norm normalize
ctc_loss nll_loss poisson_nll_loss gaussian_nll_loss kl_div cross_entropy binary_cross_entropy
binary_cross_entropy_with_logits smooth_l1_loss huber_loss l1_loss mse_loss margin_ranking_loss
hinge_embedding_loss multilabel_margin_loss soft_margin_loss multilabel_soft_margin_loss
cosine_embedding_loss multi_margin_loss triplet_margin_loss triplet_margin_with_distance_loss
pixel_shuffle pixel_unshuffle channel_shuffle upsample interpolate upsample_nearest
upsample_bilinear grid_sample affine_grid pad pairwise_distance pdist cosine_similarity one_hot
unfold fold multi_head_attention_forward scaled_dot_product_attention""".split()

_DISTRIBUTED = """send recv isend irecv broadcast all_reduce reduce all_gather all_gather_into_tensor
_all_gather_base gather scatter reduce_scatter reduce_scatter_tensor _reduce_scatter_base
all_to_all all_to_all_single barrier batch_isend_irecv broadcast_object_list all_gather_object""".split()

_SHARED = _UNARY_MATH + _BINARY_MATH + _COMPARE + _REDUCE + _LINALG + _SHAPE

API_NAMES = {
    "Functional": sorted(set(_FUNCTIONAL)),
    "Tensor": sorted(set(_SHARED + _CAST + _TENSOR_ONLY) - {"cdist", "einsum", "chain_matmul", "tensordot"}),
    "Torch": sorted(set(_SHARED + _TORCH_ONLY) - {"type_as", "view_as", "expand", "expand_as", "repeat", "reshape_as"}),
    "Distributed": sorted(set(_DISTRIBUTED)),
}

# msprobe's risk classes: at risk_level FOCUS (the default) the low-risk APIs (views, casts,
# factories) are not dumped; at CORE only the core compute APIs are.
CORE_APIS = frozenset("""matmul __matmul__ bmm addmm addmm_ addbmm addbmm_ baddbmm baddbmm_ mm mv addmv
addmv_ addr addr_ conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d conv_tbc
convolution _convolution linear bilinear batch_norm instance_norm layer_norm group_norm
local_response_norm embedding embedding_bag multi_head_attention_forward
scaled_dot_product_attention""".split()) | frozenset(_DISTRIBUTED)

LOW_RISK_APIS = frozenset("""squeeze unsqueeze reshape reshape_as view view_as flatten unflatten expand
expand_as repeat repeat_interleave tile transpose permute moveaxis movedim swapaxes swapdims chunk
unsafe_chunk split split_with_sizes unsafe_split unsafe_split_with_sizes tensor_split hsplit vsplit
dsplit unbind stack cat concat concatenate hstack vstack dstack column_stack row_stack align_as
align_to atleast_1d atleast_2d atleast_3d ravel clamp unfold type_as to float double int long half
bfloat16 byte char bool cfloat numpy empty empty_like zeros zeros_like ones ones_like full
full_like arange linspace logspace eye identity diag diagflat diag_embed triu tril triu_indices
tril_indices clone __bool__ stride""".split())


# Tensor methods that change a tensor's dtype. A narrowing one (to a float of less precision or
# range, or from a float to an integer) is noted in numprobe's side record casts.json at every
# risk level. CAST_ONLY are wrapped for that record alone: msprobe does not wrap them, so they
# never appear in dump.json.
CAST_ONLY = frozenset(["type"])
CAST_APIS = frozenset(_CAST + ["type_as"]) | CAST_ONLY


def risk_allows(risk_level, api_name):
    """Whether an API named `api_name` (without prefix or count) is dumped at `risk_level`."""
    if risk_level == "ALL":
        return True
    if risk_level == "CORE":
        return api_name in CORE_APIS
    return api_name not in LOW_RISK_APIS
