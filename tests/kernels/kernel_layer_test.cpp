// The typed kernel layer of the SDK (etrt/kernel.hpp) on its own: a fake host
// records the errors it is asked to create, and small typed kernels check what
// they receive.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "etrt/kernel.hpp"

namespace {

using etrt::plugin::Call;
using etrt::plugin::IntArrayRef;
using etrt::plugin::KernelDef;
using etrt::plugin::OptionalTensorList;
using etrt::plugin::Scalar;
using etrt::plugin::ScalarType;
using etrt::plugin::Tensor;
using etrt::plugin::TensorList;
using testing::HasSubstr;

// Errors of the fake host: a code and a message.
struct FakeError {
  int32_t code;
  std::string message;
};
et_error* fake_error_create(int32_t code, const char* message) {
  return reinterpret_cast<et_error*>(new FakeError{code, message});
}
et_error* fake_register(et_plugin_handle*, const et_kernel_descriptor*) { return nullptr; }

struct Outcome {
  bool ok;
  int32_t code;
  std::string message;
};
Outcome outcome(et_error* error) {
  if (error == nullptr) return {true, ET_OK, ""};
  auto* e = reinterpret_cast<FakeError*>(error);
  Outcome o{false, e->code, e->message};
  delete e;
  return o;
}

// What the typed kernels saw.
struct Seen {
  std::string op;
  const et_tensor* self = nullptr;
  Scalar alpha;
  int64_t dim = 0;
  double eps = 0;
  bool flag = false;
  std::optional<int64_t> maybe;
  std::vector<int64_t> list;
  std::string text;
  size_t list_size = 0;
  const et_tensor* optional_tensor = reinterpret_cast<const et_tensor*>(1);
  int32_t dtype = -1;
} seen;

et_error* add_like(Call call, const Tensor& self, const Tensor& other, Scalar alpha, Tensor& out) {
  seen.op = call.op;
  seen.self = &self;
  seen.alpha = alpha;
  return nullptr;
}
et_error* many_kinds(const Tensor& self, int64_t dim, double eps, bool flag, std::optional<int64_t> maybe,
                     IntArrayRef list, std::optional<std::string_view> text, const Tensor* weight,
                     std::optional<ScalarType> dtype, Tensor& out) {
  seen.dim = dim, seen.eps = eps, seen.flag = flag, seen.maybe = maybe;
  seen.list.assign(list.begin(), list.end());
  seen.text = text ? std::string(*text) : "<none>";
  seen.optional_tensor = weight;
  seen.dtype = dtype ? static_cast<int32_t>(*dtype) : -1;
  return nullptr;
}
et_error* two_outputs(const Tensor& self, Tensor& out, Tensor& indices) { return nullptr; }
et_error* split_like(const Tensor& self, TensorList out) {
  seen.list_size = out.size();
  return nullptr;
}
et_error* index_like(const Tensor& self, OptionalTensorList indices, Tensor& out) {
  seen.list_size = indices.size();
  seen.optional_tensor = indices.size() > 0 ? indices[0] : nullptr;
  return nullptr;
}
et_error* throws_bad_alloc(const Tensor&, Tensor&) { throw std::bad_alloc(); }
et_error* throws_runtime_error(const Tensor&, Tensor&) { throw std::runtime_error("boom"); }
et_error* throws_int(const Tensor&, Tensor&) { throw 42; }

// A prepared kernel (ABI 1.4): the state records the alpha it was prepared with; alpha 0 declines, a negative
// alpha makes prepare throw.
struct AlphaState final : etrt::plugin::PreparedState {
  static inline int alive = 0;
  int64_t alpha;
  explicit AlphaState(int64_t a) : alpha(a) { ++alive; }
  ~AlphaState() override { --alive; }
};
et_error* prepared_add(Call call, const Tensor& self, const Tensor& other, Scalar alpha, Tensor& out) {
  seen.op = call.op;
  seen.dim = call.state != nullptr ? static_cast<AlphaState*>(call.state)->alpha : -1;
  return nullptr;
}
et_error* prepare_add(etrt::plugin::Prepare& prepare, const Tensor& self, const Tensor& other, Scalar alpha,
                      Tensor& out) {
  if (alpha.to_int() < 0) throw std::runtime_error("negative alpha");
  if (alpha.to_int() != 0) prepare.state = std::make_unique<AlphaState>(alpha.to_int());
  return nullptr;
}

constexpr KernelDef kDefs[] = {
    etrt::plugin::kernel<add_like>("test::add.out", "self, other, alpha, out"),
    etrt::plugin::kernel<many_kinds>("test::many.out",
                                     "self, dim, eps, flag, maybe, list, text, weight, dtype, out"),
    etrt::plugin::kernel<two_outputs>("test::two.out", "self, out, indices -> (out, indices)"),
    etrt::plugin::kernel<split_like>("test::split.out", "self, out -> ()"),
    etrt::plugin::kernel<index_like>("test::index.out", "self, indices, out"),
    etrt::plugin::kernel<throws_bad_alloc>("test::oom.out", "self, out"),
    etrt::plugin::kernel<throws_runtime_error>("test::boom.out", "self, out"),
    etrt::plugin::kernel<throws_int>("test::int.out", "self, out"),
    etrt::plugin::kernel<etrt::plugin::prepared<prepared_add, prepare_add>>("test::prepared_add.out",
                                                                            "self, other, alpha, out"),
};

static_assert(kDefs[0].params == 4 && kDefs[0].returns == 1);
static_assert(kDefs[2].params == 3 && kDefs[2].returns == 2);
static_assert(kDefs[3].params == 2 && kDefs[3].returns == 0);

class KernelLayer : public testing::Test {
 protected:
  void SetUp() override {
    api_.struct_size = sizeof api_;
    api_.error_create = fake_error_create;
    api_.register_kernel = fake_register;
    host_.bind(&api_, nullptr);
    ASSERT_EQ(etrt::plugin::register_kernels(host_, kDefs), nullptr);
    seen = Seen{};
  }
  static const KernelDef& def(const char* name) {
    for (const KernelDef& d : kDefs)
      if (std::string(d.name) == name) return d;
    throw std::logic_error(name);
  }
  Outcome call(const char* name, std::vector<et_value*> args) {
    const KernelDef& d = def(name);
    return outcome(d.fn(const_cast<KernelDef*>(&d), nullptr, args.data(), args.size()));
  }

  static et_value tensor_value(et_tensor* t) {
    et_value v{};
    v.struct_size = sizeof v;
    v.tag = ET_VALUE_TENSOR;
    v.tensor = t;
    return v;
  }
  static et_value tagged(int32_t tag, int64_t i = 0, double d = 0) {
    et_value v{};
    v.struct_size = sizeof v;
    v.tag = tag;
    v.as_int = i;
    v.as_double = d;
    return v;
  }

  et_host_api api_{};
  etrt::plugin::Host host_;
  et_tensor a_{}, b_{}, c_{};
  et_value ta_ = tensor_value(&a_), tb_ = tensor_value(&b_), tc_ = tensor_value(&c_);
};

TEST_F(KernelLayer, UnboxesTypedArgumentsAndNamesTheOperator) {
  et_value alpha = tagged(ET_VALUE_DOUBLE, 0, 2.5);
  Outcome o = call("test::add.out", {&ta_, &tb_, &alpha, &tc_, &tc_});
  ASSERT_TRUE(o.ok) << o.message;
  EXPECT_EQ(seen.op, "test::add.out");
  EXPECT_EQ(seen.self, &a_);
  EXPECT_EQ(seen.alpha.kind, Scalar::kDouble);
  EXPECT_EQ(seen.alpha.to_double(), 2.5);
}

TEST_F(KernelLayer, APreparedKernelGetsItsStateInTheCallAndTheLayerDeletesIt) {
  const KernelDef& d = def("test::prepared_add.out");
  ASSERT_NE(d.prepare, nullptr);
  ASSERT_NE(d.run_prepared, nullptr);
  ASSERT_NE(d.release, nullptr);
  EXPECT_EQ(def("test::add.out").prepare, nullptr);
  void* user_data = const_cast<KernelDef*>(&d);
  et_value alpha = tagged(ET_VALUE_INT, 7);
  std::vector<et_value*> args = {&ta_, &tb_, &alpha, &tc_, &tc_};
  void* state = nullptr;
  ASSERT_TRUE(outcome(d.prepare(user_data, args.data(), args.size(), &state)).ok);
  ASSERT_NE(state, nullptr);
  EXPECT_EQ(AlphaState::alive, 1);
  ASSERT_TRUE(outcome(d.run_prepared(user_data, state, nullptr, args.data(), args.size())).ok);
  EXPECT_EQ(seen.op, "test::prepared_add.out");
  EXPECT_EQ(seen.dim, 7);
  ASSERT_TRUE(call("test::prepared_add.out", args).ok);  // fn: the same kernel without a state
  EXPECT_EQ(seen.dim, -1);
  d.release(user_data, state);
  EXPECT_EQ(AlphaState::alive, 0);
}

TEST_F(KernelLayer, APrepareFunctionMayDeclineAndItsErrorsAreWordedLikeTheKernels) {
  const KernelDef& d = def("test::prepared_add.out");
  void* user_data = const_cast<KernelDef*>(&d);
  void* state = reinterpret_cast<void*>(1);
  et_value zero = tagged(ET_VALUE_INT, 0), negative = tagged(ET_VALUE_INT, -1);
  std::vector<et_value*> declined = {&ta_, &tb_, &zero, &tc_, &tc_};
  ASSERT_TRUE(outcome(d.prepare(user_data, declined.data(), declined.size(), &state)).ok);
  EXPECT_EQ(state, nullptr);

  std::vector<et_value*> wrong_kind = {&ta_, &tb_, &tb_, &tc_, &tc_};
  Outcome o = outcome(d.prepare(user_data, wrong_kind.data(), wrong_kind.size(), &state));
  EXPECT_EQ(o.code, ET_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(o.message, HasSubstr("test::prepared_add.out: argument 2 'alpha' must be a Scalar"));
  EXPECT_EQ(state, nullptr);

  std::vector<et_value*> short_list = {&ta_, &tb_, &zero};
  o = outcome(d.prepare(user_data, short_list.data(), short_list.size(), &state));
  EXPECT_THAT(o.message, HasSubstr("expected 5 arguments, got 3"));

  std::vector<et_value*> throwing = {&ta_, &tb_, &negative, &tc_, &tc_};
  o = outcome(d.prepare(user_data, throwing.data(), throwing.size(), &state));
  EXPECT_EQ(o.code, ET_ERR_INTERNAL);
  EXPECT_THAT(o.message, HasSubstr("internal error: negative alpha"));
  EXPECT_EQ(state, nullptr);
  EXPECT_EQ(AlphaState::alive, 0);
}

TEST_F(KernelLayer, ReadsEveryScalarKindAndOptional) {
  et_value dim = tagged(ET_VALUE_INT, -2), eps = tagged(ET_VALUE_INT, 3), flag = tagged(ET_VALUE_BOOL, 1);
  et_value none = tagged(ET_VALUE_NULL), dtype = tagged(ET_VALUE_INT, ET_DTYPE_FLOAT64);
  int64_t items[] = {4, 5, 6};
  et_value list = tagged(ET_VALUE_INT_LIST);
  list.items = items, list.count = 3;
  const char text[] = {'t', 'a', 'n', 'h'};
  et_value str = tagged(ET_VALUE_STRING);
  str.items = text, str.count = 4;
  ASSERT_TRUE(call("test::many.out", {&ta_, &dim, &eps, &flag, &none, &list, &str, &none, &dtype, &tc_, &tc_}).ok);
  EXPECT_EQ(seen.dim, -2);
  EXPECT_EQ(seen.eps, 3.0);
  EXPECT_TRUE(seen.flag);
  EXPECT_FALSE(seen.maybe.has_value());
  EXPECT_EQ(seen.list, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(seen.text, "tanh");
  EXPECT_EQ(seen.optional_tensor, nullptr);
  EXPECT_EQ(seen.dtype, ET_DTYPE_FLOAT64);

  et_value seven = tagged(ET_VALUE_INT, 7);
  ASSERT_TRUE(call("test::many.out", {&ta_, &dim, &eps, &flag, &seven, &list, &none, &tb_, &none, &tc_, &tc_}).ok);
  EXPECT_EQ(seen.maybe, 7);
  EXPECT_EQ(seen.text, "<none>");
  EXPECT_EQ(seen.optional_tensor, &b_);
  EXPECT_EQ(seen.dtype, -1);
}

TEST_F(KernelLayer, OneWordingForAWrongKind) {
  et_value alpha = tagged(ET_VALUE_INT, 1);
  EXPECT_EQ(call("test::add.out", {&ta_, &tb_, &ta_, &tc_, &tc_}).message,
            "test::add.out: argument 2 'alpha' must be a Scalar (int, float or bool), got Tensor");
  Outcome o = call("test::add.out", {&ta_, &alpha, &alpha, &tc_, &tc_});
  EXPECT_EQ(o.code, ET_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(o.message, "test::add.out: argument 1 'other' must be a Tensor, got int");

  et_value none = tagged(ET_VALUE_NULL), f = tagged(ET_VALUE_DOUBLE, 0, 1.5), t = tagged(ET_VALUE_BOOL, 1);
  int64_t items[] = {1};
  et_value list = tagged(ET_VALUE_INT_LIST);
  list.items = items, list.count = 1;
  EXPECT_EQ(call("test::many.out", {&ta_, &f, &f, &t, &none, &list, &none, &none, &none, &tc_, &tc_}).message,
            "test::many.out: argument 1 'dim' must be an int, got double");
  EXPECT_EQ(call("test::many.out", {&ta_, &alpha, &f, &t, &f, &list, &none, &none, &none, &tc_, &tc_}).message,
            "test::many.out: argument 4 'maybe' must be an int or None, got double");
  EXPECT_EQ(call("test::many.out", {&ta_, &alpha, &f, &t, &none, &alpha, &none, &none, &none, &tc_, &tc_}).message,
            "test::many.out: argument 5 'list' must be an int list, got int");
  EXPECT_EQ(call("test::many.out", {&ta_, &alpha, &f, &t, &none, &list, &alpha, &none, &none, &tc_, &tc_}).message,
            "test::many.out: argument 6 'text' must be a string or None, got int");
  EXPECT_EQ(call("test::many.out", {&ta_, &alpha, &f, &t, &none, &list, &none, &alpha, &none, &tc_, &tc_}).message,
            "test::many.out: argument 7 'weight' must be a Tensor or None, got int");
  EXPECT_EQ(call("test::many.out", {&ta_, &alpha, &f, &none, &none, &list, &none, &none, &none, &tc_, &tc_}).message,
            "test::many.out: argument 3 'flag' must be a bool, got None");
}

TEST_F(KernelLayer, ChecksTheCountOnceIncludingTheReturnedValue) {
  et_value alpha = tagged(ET_VALUE_INT, 1);
  Outcome o = call("test::add.out", {&ta_, &tb_, &alpha, &tc_});
  EXPECT_EQ(o.code, ET_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(o.message,
            "test::add.out: expected 5 arguments, got 4 (self, other, alpha, out, then the returned out tensor)");
  EXPECT_THAT(call("test::add.out", {&ta_, &tb_, &alpha, &tc_, &tc_, &tc_}).message,
              HasSubstr("expected 5 arguments, got 6"));
  EXPECT_EQ(call("test::add.out", {&ta_, nullptr, &alpha, &tc_, &tc_}).message,
            "test::add.out: argument 1 'other' is missing (null)");
  EXPECT_EQ(call("test::add.out", {&ta_, &tb_, &alpha, &tc_, &alpha}).message,
            "test::add.out: the last argument must be the returned out tensor, got int");
  const KernelDef& d = def("test::add.out");
  EXPECT_THAT(outcome(d.fn(const_cast<KernelDef*>(&d), nullptr, nullptr, 5)).message, HasSubstr("expected 5"));
}

TEST_F(KernelLayer, SeveralOutputsComeBackAsOneList) {
  et_tensor* outs[] = {&b_, &c_};
  et_value list = tagged(ET_VALUE_TENSOR_LIST);
  list.items = outs, list.count = 2;
  EXPECT_TRUE(call("test::two.out", {&ta_, &tb_, &tc_, &list}).ok);
  list.count = 1;
  EXPECT_EQ(call("test::two.out", {&ta_, &tb_, &tc_, &list}).message,
            "test::two.out: the last argument must be the list of the 2 returned outputs (out, indices), got Tensor "
            "list of 1");
}

TEST_F(KernelLayer, NothingReturnedMayOrMayNotBeFollowedByAValue) {
  et_tensor* outs[] = {&b_, &c_, &a_};
  et_value list = tagged(ET_VALUE_TENSOR_LIST), none = tagged(ET_VALUE_NULL);
  list.items = outs, list.count = 3;
  EXPECT_TRUE(call("test::split.out", {&ta_, &list}).ok);
  EXPECT_EQ(seen.list_size, 3u);
  EXPECT_TRUE(call("test::split.out", {&ta_, &list, &none}).ok);
  EXPECT_THAT(call("test::split.out", {&ta_}).message, HasSubstr("expected 2 arguments, got 1 (self, out)"));
  outs[1] = nullptr;  // Tensor[] holds no None
  EXPECT_EQ(call("test::split.out", {&ta_, &list}).message,
            "test::split.out: argument 1 'out' must be a Tensor list, got Tensor list with None at 1");
}

TEST_F(KernelLayer, OptionalTensorListsKeepTheirNones) {
  et_tensor* entries[] = {nullptr, &b_};
  et_value list = tagged(ET_VALUE_OPTIONAL_TENSOR_LIST);
  list.items = entries, list.count = 2;
  ASSERT_TRUE(call("test::index.out", {&ta_, &list, &tc_, &tc_}).ok);
  EXPECT_EQ(seen.list_size, 2u);
  EXPECT_EQ(seen.optional_tensor, nullptr);
}

TEST_F(KernelLayer, ExceptionsStopAtTheBoundary) {
  Outcome oom = call("test::oom.out", {&ta_, &tc_, &tc_});
  EXPECT_EQ(oom.code, ET_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(oom.message, "test::oom.out: out of memory");
  Outcome boom = call("test::boom.out", {&ta_, &tc_, &tc_});
  EXPECT_EQ(boom.code, ET_ERR_INTERNAL);
  EXPECT_EQ(boom.message, "test::boom.out: internal error: boom");
  EXPECT_EQ(call("test::int.out", {&ta_, &tc_, &tc_}).message, "test::int.out: internal error (unknown exception)");
}

}  // namespace
