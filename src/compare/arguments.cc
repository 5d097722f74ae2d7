#include "compare/arguments.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "core/py_format.h"
#include "msprobe/entry_name.h"

namespace numprobe::detail {
namespace {

// Positional parameters of common torch APIs (torch 1.13 - 2.x signatures, as the dump records
// them: Tensor methods with `self` first). A lookup table: torch's own signatures are not in a
// dump, and these few dozen cover the arguments precision bugs hide in.
struct Signature {
  std::string_view api;
  std::string_view params;  // comma-separated
};
constexpr Signature kSignatures[] = {
    {"layer_norm", "input,normalized_shape,weight,bias,eps"},
    {"rms_norm", "input,normalized_shape,weight,eps"},
    {"group_norm", "input,num_groups,weight,bias,eps"},
    {"batch_norm", "input,running_mean,running_var,weight,bias,training,momentum,eps"},
    {"instance_norm", "input,running_mean,running_var,weight,bias,use_input_stats,momentum,eps"},
    {"local_response_norm", "input,size,alpha,beta,k"},
    {"normalize", "input,p,dim,eps"},
    {"dropout", "input,p,training,inplace"},
    {"dropout1d", "input,p,training,inplace"},
    {"dropout2d", "input,p,training,inplace"},
    {"dropout3d", "input,p,training,inplace"},
    {"alpha_dropout", "input,p,training,inplace"},
    {"feature_alpha_dropout", "input,p,training,inplace"},
    {"softmax", "input,dim,_stacklevel,dtype"},
    {"log_softmax", "input,dim,_stacklevel,dtype"},
    {"softmin", "input,dim,_stacklevel,dtype"},
    {"gelu", "input,approximate"},
    {"leaky_relu", "input,negative_slope,inplace"},
    {"elu", "input,alpha,inplace"},
    {"celu", "input,alpha,inplace"},
    {"hardtanh", "input,min_val,max_val,inplace"},
    {"softplus", "input,beta,threshold"},
    {"threshold", "input,threshold,value,inplace"},
    {"linear", "input,weight,bias"},
    {"bilinear", "input1,input2,weight,bias"},
    {"conv1d", "input,weight,bias,stride,padding,dilation,groups"},
    {"conv2d", "input,weight,bias,stride,padding,dilation,groups"},
    {"conv3d", "input,weight,bias,stride,padding,dilation,groups"},
    {"embedding", "input,weight,padding_idx,max_norm,norm_type,scale_grad_by_freq,sparse"},
    {"cross_entropy",
     "input,target,weight,size_average,ignore_index,reduce,reduction,label_smoothing"},
    {"nll_loss", "input,target,weight,size_average,ignore_index,reduce,reduction"},
    {"mse_loss", "input,target,size_average,reduce,reduction"},
    {"l1_loss", "input,target,size_average,reduce,reduction"},
    {"smooth_l1_loss", "input,target,size_average,reduce,reduction,beta"},
    {"huber_loss", "input,target,reduction,delta"},
    {"kl_div", "input,target,size_average,reduce,reduction,log_target"},
    {"binary_cross_entropy_with_logits",
     "input,target,weight,size_average,reduce,reduction,pos_weight"},
    {"scaled_dot_product_attention", "query,key,value,attn_mask,dropout_p,is_causal,scale"},
    {"interpolate", "input,size,scale_factor,mode,align_corners"},
    {"add", "input,other,alpha"},
    {"sub", "input,other,alpha"},
    {"rsub", "input,other,alpha"},
    {"mul", "input,other"},
    {"div", "input,other"},
    {"truediv", "input,other"},
    {"true_divide", "input,other"},
    {"matmul", "input,other"},
    {"pow", "input,exponent"},
    {"addcdiv", "input,tensor1,tensor2,value"},
    {"addcmul", "input,tensor1,tensor2,value"},
    {"addmm", "input,mat1,mat2,beta,alpha"},
    {"baddbmm", "input,batch1,batch2,beta,alpha"},
    {"lerp", "input,end,weight"},
    {"clamp", "input,min,max"},
    {"clip", "input,min,max"},
    {"masked_fill", "input,mask,value"},
    {"sum", "input,dim,keepdim,dtype"},
    {"mean", "input,dim,keepdim,dtype"},
    {"std", "input,dim,unbiased,keepdim"},
    {"var", "input,dim,unbiased,keepdim"},
    {"norm", "input,p,dim,keepdim"},
    {"logsumexp", "input,dim,keepdim"},
    {"cumsum", "input,dim"},
    {"topk", "input,k,dim,largest,sorted"},
};

// The signature key of an API name: in-place and dunder spellings share their function's
// ("add_", "__add__", "__iadd__", "__radd__" -> "add").
std::string_view SignatureKey(std::string_view api) {
  if (api.size() > 4 && api.starts_with("__") && api.ends_with("__")) {
    api = api.substr(2, api.size() - 4);
    const bool reflected_or_inplace =
        (api.starts_with("r") || api.starts_with("i")) && api != "rsub" && api.size() > 2;
    if (reflected_or_inplace) api.remove_prefix(1);
  } else if (api.size() > 1 && api.ends_with("_") && !api.starts_with("_")) {
    api.remove_suffix(1);
  }
  return api;
}

std::string_view Param(std::string_view api, size_t index) {
  const std::string_view key = SignatureKey(api);
  for (const Signature& s : kSignatures) {
    if (s.api != key) continue;
    std::string_view params = s.params;
    for (size_t i = 0;; ++i) {
      const size_t comma = params.find(',');
      if (i == index) return params.substr(0, comma);
      if (comma == std::string_view::npos) return {};
      params.remove_prefix(comma + 1);
    }
  }
  return {};
}

}  // namespace

std::string_view ApiOfEntry(std::string_view entry) {
  const EntryNameParts parts = ParseEntryName(entry);  // an api may hold dots ("linalg.norm")
  if (parts.prefix == "Module" || parts.prefix == "Cell") return {};
  return parts.api;
}

std::string ArgumentName(std::string_view entry, std::string_view row_name) {
  std::string_view rest = row_name;
  if (rest.starts_with(entry) && rest.size() > entry.size() + 1) {
    rest.remove_prefix(entry.size() + 1);
  }
  // "input.4", "input.eps", "input.1.0", "kwargs.eps"
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return std::string(rest);
  std::string_view key = rest.substr(dot + 1);
  std::string_view tail;
  if (const size_t more = key.find('.'); more != std::string_view::npos) {
    tail = key.substr(more + 1);
    key = key.substr(0, more);
  }
  std::string name;
  if (IsDigits(key)) {
    size_t index = 0;
    for (const char c : key) index = index * 10 + static_cast<size_t>(c - '0');
    const std::string_view param = key.size() < 6 ? Param(ApiOfEntry(entry), index) : "";
    if (param.empty()) return std::string(rest);
    name = std::string(param);
  } else {
    name = std::string(key);
  }
  if (!tail.empty()) name += fmt::format("[{}]", tail);
  return name;
}

std::string ArgumentRepr(const DumpFile& file, const DumpRow& row) {
  const PyValue& v = row.stats[0];
  switch (v.kind()) {
    case PyValue::Kind::kNone:
      return "None";
    case PyValue::Kind::kBool:
      return v.as_bool() ? "True" : "False";
    case PyValue::Kind::kInt:
      return std::to_string(v.as_int());
    case PyValue::Kind::kBigInt:
      return file.Text(v.text_id());
    case PyValue::Kind::kFloat:
      return PyFloatRepr(v.as_float());
    case PyValue::Kind::kStr:
      if (file.Text(row.dtype) == "<class 'str'>") return PyStrRepr(file.Text(v.text_id()));
      return file.Text(v.text_id());
  }
  return "None";
}

std::vector<ArgumentChange> DifferingArguments(const CompareTable& table, size_t begin,
                                               size_t end) {
  std::vector<ArgumentChange> out;
  const DumpFile& tf = *table.target;
  const DumpFile& gf = *table.golden;
  for (size_t i = begin; i < end && i < table.rows.size(); ++i) {
    const CompareRow& r = table.rows[i];
    if (!r.paired()) continue;
    const DumpRow& t = tf.rows[r.target];
    const DumpRow& g = gf.rows[static_cast<size_t>(r.golden)];
    if (t.is_tensor || g.is_tensor || t.state != RowState::kInput) continue;
    std::string a = ArgumentRepr(tf, t);
    std::string b = ArgumentRepr(gf, g);
    if (a == b) continue;
    out.push_back({ArgumentName(tf.entries[t.entry].name, t.name), std::move(a), std::move(b)});
  }
  return out;
}

}  // namespace numprobe::detail
