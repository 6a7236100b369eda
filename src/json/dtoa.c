/* json/dtoa.c — shortest round-trip double → text, ECMAScript Number::toString (spec 01 §2.5).
 *
 * The digits come from the Schubfach construction (R. Giulietti, "The Schubfach way to render
 * doubles", 2020), written here from the paper: scale the rounding interval of v by a 126-bit
 * upper approximation of 10^-k, keep two fraction bits plus a round-to-odd sticky bit, and pick
 * among at most four decimal candidates. The Java rule that forces two digits is left out:
 * ECMAScript wants the truly shortest string (5e-324, not 4.9e-324). */
#include "json/dtoa.h"

#include <stdint.h>
#include <string.h>

__extension__ typedef unsigned __int128 dtoa_u128;

#define FRAC_BITS 52
#define FRAC_MASK ((UINT64_C(1) << FRAC_BITS) - 1)
#define HIDDEN_BIT (UINT64_C(1) << FRAC_BITS)
#define EXP_BIAS_SHIFT 1075 /* v = c * 2^(biased_exp - 1075) for normal values */
#define Q_MIN (-1074)       /* exponent of every subnormal and of the smallest normals */

/* g(p) = floor(10^p * 2^(125 - floor(log2 10^p))) + 1, in [2^125, 2^126), for p = -k over
 * every k a double can need. Generated with exact rational arithmetic (Python Fraction). */
#define POW_MIN (-292)
#define POW_MAX 324
typedef struct {
  uint64_t hi, lo;
} pow10_u128;
static const pow10_u128 pow10_table[POW_MAX - POW_MIN + 1] = {
    {0x3fddec7f2faf3713u, 0xc97a3a2704eec3dfu}, /* 1e-292 */
    {0x27eab3cf7dcd826cu, 0x5dec645863153a6cu}, /* 1e-291 */
    {0x31e560c35d40e307u, 0x75677d6e7bda8906u}, /* 1e-290 */
    {0x3e5eb8f434911bc9u, 0x52c15cca1ad12b48u}, /* 1e-289 */
    {0x26fb3398a0dab15du, 0xd3b8d9fe50c2bb0du}, /* 1e-288 */
    {0x30ba007ec9115db5u, 0x48a7107de4f369d0u}, /* 1e-287 */
    {0x3ce8809e7b55b522u, 0x9ad0d49d5e304444u}, /* 1e-286 */
    {0x261150630d159135u, 0xa0c284e25ade2aabu}, /* 1e-285 */
    {0x2f95a47bd05af583u, 0x08f3261af195b555u}, /* 1e-284 */
    {0x3b7b0d9ac471b2e3u, 0xcb2fefa1adfb22abu}, /* 1e-283 */
    {0x252ce880bac70fceu, 0x5efdf5c50cbcf5abu}, /* 1e-282 */
    {0x2e7822a0e978d3c1u, 0xf6bd73364fec3315u}, /* 1e-281 */
    {0x3a162b4923d708b2u, 0x746cd003e3e73fdbu}, /* 1e-280 */
    {0x244ddb0db666656fu, 0x88c402026e7087e9u}, /* 1e-279 */
    {0x2d6151d123fffecbu, 0x6af502830a0ca9e3u}, /* 1e-278 */
    {0x38b9a6456cfffe7eu, 0x45b24323cc8fd45cu}, /* 1e-277 */
    {0x237407eb641fff0eu, 0xeb8f69f65fd9e4b9u}, /* 1e-276 */
    {0x2c5109e63d27fed2u, 0xa6734473f7d05de8u}, /* 1e-275 */
    {0x37654c5fcc71fe87u, 0x50101590f5c47561u}, /* 1e-274 */
    {0x229f4fbbdfc73f14u, 0x920a0d7a999ac95du}, /* 1e-273 */
    {0x2b4723aad7b90ed9u, 0xb68c90d940017bb4u}, /* 1e-272 */
    {0x3618ec958da75290u, 0x242fb50f9001daa1u}, /* 1e-271 */
    {0x21cf93dd7888939au, 0x169dd129ba0128a5u}, /* 1e-270 */
    {0x2a4378d4d6aab880u, 0x9c454574288172ceu}, /* 1e-269 */
    {0x34d4570a0c5566a0u, 0xc35696d132a1cf81u}, /* 1e-268 */
    {0x2104b66647b56024u, 0x7a161e42bfa521b1u}, /* 1e-267 */
    {0x2945e3ffd9a2b82du, 0x989ba5d36f8e6a1du}, /* 1e-266 */
    {0x33975cffd00b6638u, 0xfec28f484b7204a4u}, /* 1e-265 */
    {0x203e9a1fe2071fe3u, 0x9f39998d2f2742e7u}, /* 1e-264 */
    {0x284e40a7da88e7dcu, 0x8707fff07af113a1u}, /* 1e-263 */
    {0x3261d0d1d12b21d3u, 0xa8c9ffec99ad5889u}, /* 1e-262 */
    {0x3efa45064575ea48u, 0x92fc7fe7c018aeabu}, /* 1e-261 */
    {0x275c6b23eb69b26du, 0x5bddcff0d80f6d2bu}, /* 1e-260 */
    {0x313385ece6441f08u, 0xb2d543ed0e134875u}, /* 1e-259 */
    {0x3d8067681fd526cau, 0xdf8a94e851981a93u}, /* 1e-258 */
    {0x267040a113e5383eu, 0xcbb69d1132ff109cu}, /* 1e-257 */
    {0x300c50c958de864eu, 0x7ea444557fbed4c3u}, /* 1e-256 */
    {0x3c0f64fbaf1627e2u, 0x1e4d556adfae89f3u}, /* 1e-255 */
    {0x25899f1d4d6dd8edu, 0x52f05562cbcd1638u}, /* 1e-254 */
    {0x2eec06e4a0c94f28u, 0xa7ac6abb7ec05bc6u}, /* 1e-253 */
    {0x3aa7089dc8fba2f2u, 0xd197856a5e7072b8u}, /* 1e-252 */
    {0x24a865629d9d45d7u, 0xc2feb3627b0647b3u}, /* 1e-251 */
    {0x2dd27ebb4504974du, 0xb3be603b19c7d99fu}, /* 1e-250 */
    {0x39471e6a1645bd21u, 0x20adf849e039d007u}, /* 1e-249 */
    {0x23cc73024deb9634u, 0xb46cbb2e2c242205u}, /* 1e-248 */
    {0x2cbf8fc2e1667bc1u, 0xe187e9f9b72d2a86u}, /* 1e-247 */
    {0x37ef73b399c01ab2u, 0x59e9e47824f87527u}, /* 1e-246 */
    {0x22f5a850401810afu, 0x78322ecb171b4939u}, /* 1e-245 */
    {0x2bb31264501e14dbu, 0x563eba7ddce21b87u}, /* 1e-244 */
    {0x369fd6fd64259a12u, 0x2bce691d541aa268u}, /* 1e-243 */
    {0x2223e65e5e97804bu, 0x5b6101b25490a581u}, /* 1e-242 */
    {0x2aacdff5f63d605eu, 0x3239421ee9b4cee1u}, /* 1e-241 */
    {0x355817f373ccb875u, 0xbec792a6a422029au}, /* 1e-240 */
    {0x21570ef8285ff349u, 0x973cbba8269541a0u}, /* 1e-239 */
    {0x29acd2b63277f01bu, 0xfd0bea92303a9208u}, /* 1e-238 */
    {0x34180763bf15ec22u, 0xfc4ee536bc49368au}, /* 1e-237 */
    {0x208f049e576db395u, 0xddb14f4235adc217u}, /* 1e-236 */
    {0x28b2c5c5ed49207bu, 0x551da312c319329cu}, /* 1e-235 */
    {0x32df7737689b689au, 0x2a650bd773df7f43u}, /* 1e-234 */
    {0x3f97550542c242c0u, 0xb4fe4ecd50d75f14u}, /* 1e-233 */
    {0x27be952349b969b8u, 0x711ef14052869b6cu}, /* 1e-232 */
    {0x31ae3a6c1c27c426u, 0x8d66ad9067284247u}, /* 1e-231 */
    {0x3e19c9072331b530u, 0x30c058f480f252d9u}, /* 1e-230 */
    {0x26d01da475ff113eu, 0x1e783798d09773c8u}, /* 1e-229 */
    {0x3084250d937ed58du, 0xa616457f04bd50bau}, /* 1e-228 */
    {0x3ca52e50f85e8af1u, 0x0f9bd6dec5eca4e8u}, /* 1e-227 */
    {0x25e73cf29b3b16d6u, 0xa9c1664b3bb3e711u}, /* 1e-226 */
    {0x2f610c2f4209dc8cu, 0x5431bfde0aa0e0d5u}, /* 1e-225 */
    {0x3b394f3b128c53afu, 0x693e2fd58d49190bu}, /* 1e-224 */
    {0x2503d184eb97b44du, 0xa1c6dde5784dafa7u}, /* 1e-223 */
    {0x2e44c5e6267da161u, 0x0a38955ed6611b90u}, /* 1e-222 */
    {0x39d5f75fb01d09b9u, 0x4cc6bab68bf96274u}, /* 1e-221 */
    {0x2425ba9bce122613u, 0xcffc34b2177bdd89u}, /* 1e-220 */
    {0x2d2f2942c196af98u, 0xc3fb41de9d5ad4ebu}, /* 1e-219 */
    {0x387af39371fc5b7eu, 0xf4fa125644b18a26u}, /* 1e-218 */
    {0x234cd83c273db92fu, 0x591c4b75eaeef658u}, /* 1e-217 */
    {0x2c200e4b310d277bu, 0x2f635e5365aab3edu}, /* 1e-216 */
    {0x372811ddfd507159u, 0xfb3c35e83f1560e9u}, /* 1e-215 */
    {0x22790b2abe5246d8u, 0x3d05a1b1276d5c92u}, /* 1e-214 */
    {0x2b174df56de6d88eu, 0x4c470a1d7148b3b6u}, /* 1e-213 */
    {0x35dd2172c9608eb1u, 0xdf58cca4cd9ae0a3u}, /* 1e-212 */
    {0x21aa34e7bddc592fu, 0x2b977fe70080cc66u}, /* 1e-211 */
    {0x2a14c221ad536f7au, 0xf67d5fe0c0a0ff80u}, /* 1e-210 */
    {0x3499f2aa18a84b59u, 0xb41cb7d8f0c93f5fu}, /* 1e-209 */
    {0x20e037aa4f692f18u, 0x1091f2e7967dc79cu}, /* 1e-208 */
    {0x29184594e3437adeu, 0x14b66fa17c1d3983u}, /* 1e-207 */
    {0x335e56fa1c145995u, 0x99e40b89db2487e3u}, /* 1e-206 */
    {0x201af65c518cb7fdu, 0x802e873628f6d4eeu}, /* 1e-205 */
    {0x2821b3f365efe5fcu, 0xe03a2903b3348a2au}, /* 1e-204 */
    {0x322a20f03f6bdf7cu, 0x1848b344a001acb4u}, /* 1e-203 */
    {0x3eb4a92c4f46d75bu, 0x1e5ae015c80217e1u}, /* 1e-202 */
    {0x2730e9bbb18c4698u, 0xf2f8cc0d9d014eedu}, /* 1e-201 */
    {0x30fd242a9def583fu, 0x2fb6ff110441a2a8u}, /* 1e-200 */
    {0x3d3c6d35456b2e4eu, 0xfba4bed545520b52u}, /* 1e-199 */
    {0x2645c4414b62fcf1u, 0x5d46f7454b534713u}, /* 1e-198 */
    {0x2fd735519e3bbc2du, 0xb498b5169e2818d8u}, /* 1e-197 */
    {0x3bcd02a605caab39u, 0x21bee25c45b21f0eu}, /* 1e-196 */
    {0x256021a7c39eab03u, 0xb5174d79ab8f5369u}, /* 1e-195 */
    {0x2eb82a11b48655c4u, 0xa25d20d816732843u}, /* 1e-194 */
    {0x3a66349621a7eb35u, 0xcaf4690e1c0ff253u}, /* 1e-193 */
    {0x247fe0ddd508f301u, 0x9ed8c1a8d189f774u}, /* 1e-192 */
    {0x2d9fd9154a4b2fc2u, 0x068ef21305ec7551u}, /* 1e-191 */
    {0x3907cf5a9cddfbb2u, 0x8832ae97c76792a5u}, /* 1e-190 */
    {0x23a4e198a20abd4fu, 0x951fad1edca0bba8u}, /* 1e-189 */
    {0x2c8e19feca8d6ca3u, 0x7a67986693c8ea91u}, /* 1e-188 */
    {0x37b1a07e7d30c7ccu, 0x59017e8038bb2536u}, /* 1e-187 */
    {0x22cf044f0e3e7cdfu, 0xb7a0ef102374f742u}, /* 1e-186 */
    {0x2b82c562d1ce1c17u, 0xa5892ad42c523512u}, /* 1e-185 */
    {0x366376bb8641a31du, 0x8eeb75893766c256u}, /* 1e-184 */
    {0x21fe2a3533e905f2u, 0x79532975c2a03976u}, /* 1e-183 */
    {0x2a7db4c280e3476fu, 0x17a7f3d3334847d4u}, /* 1e-182 */
    {0x351d21f3211c194au, 0xdd91f0c8001a59c8u}, /* 1e-181 */
    {0x21323537f4b18fceu, 0xca7b367d0010781du}, /* 1e-180 */
    {0x297ec285f1ddf3c2u, 0x7d1a041c40149625u}, /* 1e-179 */
    {0x33de73276e5570b3u, 0x1c6085235019bbaeu}, /* 1e-178 */
    {0x206b07f8a4f5666fu, 0xf1bc53361210154du}, /* 1e-177 */
    {0x2885c9f6ce32c00bu, 0xee2b680396941aa0u}, /* 1e-176 */
    {0x32a73c7481bf700eu, 0xe9b642047c392148u}, /* 1e-175 */
    {0x3f510b91a22f4c12u, 0xa423d2859b476999u}, /* 1e-174 */
    {0x2792a73b055d8f8bu, 0xa6966393810ca200u}, /* 1e-173 */
    {0x31775109c6b4f36eu, 0x903bfc78614fca80u}, /* 1e-172 */
    {0x3dd5254c3862304au, 0x344afb9679a3bd20u}, /* 1e-171 */
    {0x26a5374fa33d5e2eu, 0x60aedd3e0c065634u}, /* 1e-170 */
    {0x304e85238c0cb5b9u, 0xf8da948d8f07ebc1u}, /* 1e-169 */
    {0x3c62266c6f0fe328u, 0x771139b0f2c9e6b1u}, /* 1e-168 */
    {0x25bd5803c569edf9u, 0x4a6ac40e97be302fu}, /* 1e-167 */
    {0x2f2cae04b6c46977u, 0x9d0575123dadbc3au}, /* 1e-166 */
    {0x3af7d985e47583d5u, 0x8446d256cd192b49u}, /* 1e-165 */
    {0x24dae7f3aec97265u, 0x72ac4376402fbb0eu}, /* 1e-164 */
    {0x2e11a1f09a7bcefeu, 0xcf575453d03ba9d1u}, /* 1e-163 */
    {0x39960a6cc11ac2beu, 0x832d2968c44a9445u}, /* 1e-162 */
    {0x23fdc683f8b0b9b7u, 0x11fc39e17aae9cabu}, /* 1e-161 */
    {0x2cfd3824f6dce824u, 0xd67b4859d95a43d6u}, /* 1e-160 */
    {0x383c862e3494222eu, 0x0c1a1a704fb0d4ccu}, /* 1e-159 */
    {0x2325d3dce0dc955cu, 0xc790508631ce84ffu}, /* 1e-158 */
    {0x2bef48d41913bab3u, 0xf97464a7be42263fu}, /* 1e-157 */
    {0x36eb1b091f58a960u, 0xf7d17dd1add2afcfu}, /* 1e-156 */
    {0x2252f0e5b39769dcu, 0x9ae2eea30ca3ade1u}, /* 1e-155 */
    {0x2ae7ad1f207d4453u, 0xc19baa4bcfcc995au}, /* 1e-154 */
    {0x35a19866e89c9568u, 0xb20294dec3bfbfb0u}, /* 1e-153 */
    {0x2184ff405161dd61u, 0x6f419d0b3a57d7ceu}, /* 1e-152 */
    {0x29e63f1065ba54b9u, 0xcb12044e08edcdc2u}, /* 1e-151 */
    {0x345fced47f28e9e8u, 0x3dd685618b294132u}, /* 1e-150 */
    {0x20bbe144cf799231u, 0x26a6135cf6f9c8bfu}, /* 1e-149 */
    {0x28ead9960357f6bdu, 0x704f983434b83aefu}, /* 1e-148 */
    {0x33258ffb842df46cu, 0xcc637e4141e649abu}, /* 1e-147 */
    {0x3feef3fa65397187u, 0xff7c5dd1925fdc15u}, /* 1e-146 */
    {0x27f5587c7f43e6f4u, 0xffadbaa2fb7be98du}, /* 1e-145 */
    {0x31f2ae9b9f14e0b2u, 0x3f99294bba5ae3f1u}, /* 1e-144 */
    {0x3e6f5a4286da18deu, 0xcf7f739ea8f19cedu}, /* 1e-143 */
    {0x2705986994484f8bu, 0x41afa84329970214u}, /* 1e-142 */
    {0x30c6fe83f95a636eu, 0x121b9253f3fcc299u}, /* 1e-141 */
    {0x3cf8be24f7b0fc49u, 0x96a276e8f0fbf33fu}, /* 1e-140 */
    {0x261b76d71ace9dadu, 0xfe258a51969d7808u}, /* 1e-139 */
    {0x2fa2548ce1824519u, 0x7daeece5fc44d609u}, /* 1e-138 */
    {0x3b8ae9b019e2d65fu, 0xdd1aa81f7b560b8cu}, /* 1e-137 */
    {0x2536d20e102dc5fbu, 0xea30a913ad15c738u}, /* 1e-136 */
    {0x2e8486919439377au, 0xe4bcd358985b3905u}, /* 1e-135 */
    {0x3a25a835f9478559u, 0x9dec082ebe720746u}, /* 1e-134 */
    {0x24578921bbccb358u, 0x02b3851d3707448cu}, /* 1e-133 */
    {0x2d6d6b6a2abfe02eu, 0x0360666484c915afu}, /* 1e-132 */
    {0x38c8c644b56fd839u, 0x84387ffda5fb5b1bu}, /* 1e-131 */
    {0x237d7beaf165e723u, 0xf2a34ffe87bd18f1u}, /* 1e-130 */
    {0x2c5cdae5adbf60ecu, 0xef4c23fe29ac5f2du}, /* 1e-129 */
    {0x3774119f192f3928u, 0x2b1f2cfdb41776f8u}, /* 1e-128 */
    {0x22a88b036fbd83b9u, 0x1af37c1e908eaa5bu}, /* 1e-127 */
    {0x2b52adc44bace4a7u, 0x61b05b2634b254f2u}, /* 1e-126 */
    {0x362759355e981dd1u, 0x3a1c71efc1deea2eu}, /* 1e-125 */
    {0x21d897c15b1f12a2u, 0xc451c735d92b525du}, /* 1e-124 */
    {0x2a4ebdb1b1e6d74bu, 0x756639034f7626f4u}, /* 1e-123 */
    {0x34e26d1e1e608d1eu, 0x52bfc7442353b0b1u}, /* 1e-122 */
    {0x210d8432d2fc5832u, 0xf3b7dc8a96144e6fu}, /* 1e-121 */
    {0x2950e53f87bb6e3fu, 0xb0a5d3ad3b99620bu}, /* 1e-120 */
    {0x33a51e8f69aa49cfu, 0x9ccf48988a7fba8du}, /* 1e-119 */
    {0x20473319a20a6e21u, 0xc2018d5f568fd498u}, /* 1e-118 */
    {0x2858ffe00a8d09aau, 0x3281f0b72c33c9beu}, /* 1e-117 */
    {0x326f3fd80d304c14u, 0xbf226ce4f740bc2eu}, /* 1e-116 */
    {0x3f0b0fce107c5f19u, 0xeeeb081e3510eb39u}, /* 1e-115 */
    {0x2766e9e0ca4dbb70u, 0x3552e512e12a9304u}, /* 1e-114 */
    {0x3140a458fce12a4cu, 0x42a79e57997537c5u}, /* 1e-113 */
    {0x3d90cd6f3c1974dfu, 0x535185ed7fd285b6u}, /* 1e-112 */
    {0x267a8065858fe90bu, 0x9412f3b46fe39392u}, /* 1e-111 */
    {0x3019207ee6f3e34eu, 0x7917b0a18bdc7876u}, /* 1e-110 */
    {0x3c1f689ea0b0dc22u, 0x175d9cc9eed39694u}, /* 1e-109 */
    {0x2593a163246e8995u, 0x4e9a81fe35443e1cu}, /* 1e-108 */
    {0x2ef889bbed8a2bfau, 0xa241227dc2954da3u}, /* 1e-107 */
    {0x3ab6ac2ae8ecb6f9u, 0x4ad16b1d333aa10cu}, /* 1e-106 */
    {0x24b22b9ad193f25bu, 0xcec2e2f24004a4a8u}, /* 1e-105 */
    {0x2ddeb68185f8eef2u, 0xc2739baed005cdd2u}, /* 1e-104 */
    {0x39566421e7772aafu, 0x7310829a84074146u}, /* 1e-103 */
    {0x23d5fe9530aa7aadu, 0xa7ea51a0928488ccu}, /* 1e-102 */
    {0x2ccb7e3a7cd51959u, 0x11e4e608b725aaffu}, /* 1e-101 */
    {0x37fe5dc91c0a5fafu, 0x565e1f8ae4ef15beu}, /* 1e-100 */
    {0x22fefa9db1867bcdu, 0x95fad3b6cf156d97u}, /* 1e-99 */
    {0x2bbeb9451de81ac0u, 0xfb7988a482dac8fdu}, /* 1e-98 */
    {0x36ae679665622171u, 0x3a57eacda3917b3cu}, /* 1e-97 */
    {0x222d00bdff5d54e6u, 0xc476f2c0863aed06u}, /* 1e-96 */
    {0x2ab840ed7f34aa20u, 0x7594af70a7c9a847u}, /* 1e-95 */
    {0x35665128df01d4a8u, 0x92f9db4cd1bc1258u}, /* 1e-94 */
    {0x215ff2b98b6124e9u, 0x5bdc291003158b77u}, /* 1e-93 */
    {0x29b7ef67ee396e23u, 0xb2d3335403daee55u}, /* 1e-92 */
    {0x3425eb41e9c7c9acu, 0x9f88002904d1a9eau}, /* 1e-91 */
    {0x2097b309321cde0bu, 0xe3b50019a3030a33u}, /* 1e-90 */
    {0x28bd9fcb7ea4158eu, 0xdca240200bc3ccbfu}, /* 1e-89 */
    {0x32ed07be5e4d1af2u, 0x93cad0280eb4bfefu}, /* 1e-88 */
    {0x3fa849adf5e061afu, 0x38bd84321261efebu}, /* 1e-87 */
    {0x27c92e0cb9ac3d0du, 0x8376729f4b7d35f3u}, /* 1e-86 */
    {0x31bb798fe8174c50u, 0xe4540f471e5c836fu}, /* 1e-85 */
    {0x3e2a57f3e21d1f65u, 0x1d691318e5f3a44bu}, /* 1e-84 */
    {0x26da76f86d52339fu, 0x3261abef8fb846afu}, /* 1e-83 */
    {0x309114b688a6c086u, 0xfefa16eb73a6585bu}, /* 1e-82 */
    {0x3cb559e42ad070a8u, 0xbeb89ca6508fee71u}, /* 1e-81 */
    {0x25f1582e9ac24669u, 0x773361e7f259f507u}, /* 1e-80 */
    {0x2f6dae3a4172d803u, 0xd5003a61eef07249u}, /* 1e-79 */
    {0x3b4919c8d1cf8e04u, 0xca4048fa6aac8edbu}, /* 1e-78 */
    {0x250db01d8321b8c2u, 0xfe682d9c82abd949u}, /* 1e-77 */
    {0x2e511c24e3ea26f3u, 0xbe023903a356cf9bu}, /* 1e-76 */
    {0x39e5632e1ce4b0b0u, 0xad82c7448c2c8382u}, /* 1e-75 */
    {0x242f5dfcd20eee6eu, 0x6c71bc8ad79bd231u}, /* 1e-74 */
    {0x2d3b357c0692aa0au, 0x078e2bad8d82c6bdu}, /* 1e-73 */
    {0x388a02db0837548cu, 0x8971b698f0e3786du}, /* 1e-72 */
    {0x235641c8e52294d7u, 0xd5e7121f968e2b44u}, /* 1e-71 */
    {0x2c2bd23b1e6b3a0du, 0xcb60d6a77c31b615u}, /* 1e-70 */
    {0x3736c6c9e6060891u, 0x3e390c515b3e239au}, /* 1e-69 */
    {0x22823c3e2fc3c55au, 0xc6e3a7b2d906d640u}, /* 1e-68 */
    {0x2b22cb4dbbb4b6b1u, 0x789c919f8f488bd0u}, /* 1e-67 */
    {0x35eb7e212aa1e45du, 0xd6c3b607731aaec4u}, /* 1e-66 */
    {0x21b32ed4baa52ebau, 0xa63a51c4a7f0ad3bu}, /* 1e-65 */
    {0x2a1ffa89e94e7a69u, 0x4fc8e635d1ecd88au}, /* 1e-64 */
    {0x34a7f92c63a21903u, 0xa3bb1fc346680eacu}, /* 1e-63 */
    {0x20e8fbbbbe454fa2u, 0x4654f3da0c01092cu}, /* 1e-62 */
    {0x29233aaaadd6a38au, 0xd7ea30d08f014b76u}, /* 1e-61 */
    {0x336c0955594c4c6du, 0x8de4bd04b2c19e54u}, /* 1e-60 */
    {0x202385d557cfafc4u, 0x78aef622efb902f5u}, /* 1e-59 */
    {0x282c674aadc39bb5u, 0x96dab3ababa743b2u}, /* 1e-58 */
    {0x3237811d593482a2u, 0xfc9160969691149eu}, /* 1e-57 */
    {0x3ec56164af81a34bu, 0xbbb5b8bc3c3559c5u}, /* 1e-56 */
    {0x273b5cdeedb1060fu, 0x55519375a5a1581bu}, /* 1e-55 */
    {0x310a3416a91d4793u, 0x2aa5f8530f09ae22u}, /* 1e-54 */
    {0x3d4cc11c53649977u, 0xf54f7667d2cc19abu}, /* 1e-53 */
    {0x264ff8b1b41edfeau, 0xf951aa00e3bf900bu}, /* 1e-52 */
    {0x2fe3f6de212697e5u, 0xb7a614811caf740du}, /* 1e-51 */
    {0x3bdcf495a9703ddfu, 0x258f99a163db5111u}, /* 1e-50 */
    {0x256a18dd89e626abu, 0x7779c004de6912abu}, /* 1e-49 */
    {0x2ec49f14ec5fb056u, 0x5558300616035755u}, /* 1e-48 */
    {0x3a75c6da27779c6bu, 0xeaae3c079b842d2au}, /* 1e-47 */
    {0x24899c4858aac1c3u, 0x72ace584c1329c3bu}, /* 1e-46 */
    {0x2dac035a6ed57234u, 0x4f581ee5f17f4349u}, /* 1e-45 */
    {0x391704310a8acec1u, 0x632e269f6ddf141bu}, /* 1e-44 */
    {0x23ae629ea696c138u, 0xddfcd823a4ab6c91u}, /* 1e-43 */
    {0x2c99fb46503c7187u, 0x157c0e2c8dd647b5u}, /* 1e-42 */
    {0x37c07a17e44b8de8u, 0xdadb11b7b14bd9a3u}, /* 1e-41 */
    {0x22d84c4eeeaf38b1u, 0x88c8eb12cecf6806u}, /* 1e-40 */
    {0x2b8e5f62aa5b06ddu, 0xeafb25d782834207u}, /* 1e-39 */
    {0x3671f73b54f1c895u, 0x65b9ef4d63241289u}, /* 1e-38 */
    {0x22073a8515171d5du, 0x5f9435905df68b96u}, /* 1e-37 */
    {0x2a8909265a5ce4b4u, 0xb77942f475742e7bu}, /* 1e-36 */
    {0x352b4b6ff0f41de1u, 0xe55793b192d13a1au}, /* 1e-35 */
    {0x213b0f25f69892adu, 0x2f56bc4efbc2c450u}, /* 1e-34 */
    {0x2989d2ef743eb758u, 0x7b2c6b62bab37564u}, /* 1e-33 */
    {0x33ec47ab514e652eu, 0x99f7863b696052bdu}, /* 1e-32 */
    {0x2073accb12d0ff3du, 0x203ab3e521dc33b6u}, /* 1e-31 */
    {0x289097fdd7853f0cu, 0x684960de6a5340a4u}, /* 1e-30 */
    {0x32b4bdfd4d668ecfu, 0x825bb91604e810cdu}, /* 1e-29 */
    {0x3f61ed7ca0c03283u, 0x62f2a75b86221500u}, /* 1e-28 */
    {0x279d346de4781f92u, 0x1dd7a89933d54d20u}, /* 1e-27 */
    {0x318481895d962776u, 0xa54d92bf80caa068u}, /* 1e-26 */
    {0x3de5a1ebb4fbb154u, 0x4ea0f76f60fd4882u}, /* 1e-25 */
    {0x26af8533511d4ed4u, 0xb1249aa59c9e4d51u}, /* 1e-24 */
    {0x305b66802564a289u, 0xdd6dc14f03c5e0a5u}, /* 1e-23 */
    {0x3c7240202ebdcb2cu, 0x54c931a2c4b758cfu}, /* 1e-22 */
    {0x25c768141d369efbu, 0xb4fdbf05baf29781u}, /* 1e-21 */
    {0x2f394219248446bau, 0xa23d2ec729af3d62u}, /* 1e-20 */
    {0x3b07929f6da55869u, 0x4acc7a78f41b0cbau}, /* 1e-19 */
    {0x24e4bba3a4875741u, 0xcebfcc8b9890e7f4u}, /* 1e-18 */
    {0x2e1dea8c8da92d12u, 0x426fbfae7eb521f1u}, /* 1e-17 */
    {0x39a5652fb1137856u, 0xd30baf9a1e626a6du}, /* 1e-16 */
    {0x24075f3dceac2b36u, 0x43e74dc052fd8285u}, /* 1e-15 */
    {0x2d09370d42573603u, 0xd4e1213067bce326u}, /* 1e-14 */
    {0x384b84d092ed0384u, 0xca19697c81ac1befu}, /* 1e-13 */
    {0x232f33025bd42232u, 0xfe4fe1edd10b9175u}, /* 1e-12 */
    {0x2bfaffc2f2c92abfu, 0xbde3da69454e75d3u}, /* 1e-11 */
    {0x36f9bfb3af7b756fu, 0xad5cd10396a21347u}, /* 1e-10 */
    {0x225c17d04dad2965u, 0xcc5a02a23e254c0du}, /* 1e-9 */
    {0x2af31dc4611873bfu, 0x3f70834acdae9f10u}, /* 1e-8 */
    {0x35afe535795e90afu, 0x0f4ca41d811a46d4u}, /* 1e-7 */
    {0x218def416bdb1a6du, 0x698fe69270b06c44u}, /* 1e-6 */
    {0x29f16b11c6d1e108u, 0xc3f3e0370cdc8755u}, /* 1e-5 */
    {0x346dc5d63886594au, 0xf4f0d844d013a92bu}, /* 1e-4 */
    {0x20c49ba5e353f7ceu, 0xd916872b020c49bbu}, /* 1e-3 */
    {0x28f5c28f5c28f5c2u, 0x8f5c28f5c28f5c29u}, /* 1e-2 */
    {0x3333333333333333u, 0x3333333333333334u}, /* 1e-1 */
    {0x2000000000000000u, 0x0000000000000001u}, /* 1e0 */
    {0x2800000000000000u, 0x0000000000000001u}, /* 1e1 */
    {0x3200000000000000u, 0x0000000000000001u}, /* 1e2 */
    {0x3e80000000000000u, 0x0000000000000001u}, /* 1e3 */
    {0x2710000000000000u, 0x0000000000000001u}, /* 1e4 */
    {0x30d4000000000000u, 0x0000000000000001u}, /* 1e5 */
    {0x3d09000000000000u, 0x0000000000000001u}, /* 1e6 */
    {0x2625a00000000000u, 0x0000000000000001u}, /* 1e7 */
    {0x2faf080000000000u, 0x0000000000000001u}, /* 1e8 */
    {0x3b9aca0000000000u, 0x0000000000000001u}, /* 1e9 */
    {0x2540be4000000000u, 0x0000000000000001u}, /* 1e10 */
    {0x2e90edd000000000u, 0x0000000000000001u}, /* 1e11 */
    {0x3a35294400000000u, 0x0000000000000001u}, /* 1e12 */
    {0x246139ca80000000u, 0x0000000000000001u}, /* 1e13 */
    {0x2d79883d20000000u, 0x0000000000000001u}, /* 1e14 */
    {0x38d7ea4c68000000u, 0x0000000000000001u}, /* 1e15 */
    {0x2386f26fc1000000u, 0x0000000000000001u}, /* 1e16 */
    {0x2c68af0bb1400000u, 0x0000000000000001u}, /* 1e17 */
    {0x3782dace9d900000u, 0x0000000000000001u}, /* 1e18 */
    {0x22b1c8c1227a0000u, 0x0000000000000001u}, /* 1e19 */
    {0x2b5e3af16b188000u, 0x0000000000000001u}, /* 1e20 */
    {0x3635c9adc5dea000u, 0x0000000000000001u}, /* 1e21 */
    {0x21e19e0c9bab2400u, 0x0000000000000001u}, /* 1e22 */
    {0x2a5a058fc295ed00u, 0x0000000000000001u}, /* 1e23 */
    {0x34f086f3b33b6840u, 0x0000000000000001u}, /* 1e24 */
    {0x2116545850052128u, 0x0000000000000001u}, /* 1e25 */
    {0x295be96e64066972u, 0x0000000000000001u}, /* 1e26 */
    {0x33b2e3c9fd0803ceu, 0x8000000000000001u}, /* 1e27 */
    {0x204fce5e3e250261u, 0x1000000000000001u}, /* 1e28 */
    {0x2863c1f5cdae42f9u, 0x5400000000000001u}, /* 1e29 */
    {0x327cb2734119d3b7u, 0xa900000000000001u}, /* 1e30 */
    {0x3f1bdf10116048a5u, 0x9340000000000001u}, /* 1e31 */
    {0x27716b6a0adc2d67u, 0x7c08000000000001u}, /* 1e32 */
    {0x314dc6448d9338c1u, 0x5b0a000000000001u}, /* 1e33 */
    {0x3da137d5b0f806f1u, 0xb1cc800000000001u}, /* 1e34 */
    {0x2684c2e58e9b0457u, 0x0f1fd00000000001u}, /* 1e35 */
    {0x3025f39ef241c56cu, 0xd2e7c40000000001u}, /* 1e36 */
    {0x3c2f7086aed236c8u, 0x07a1b50000000001u}, /* 1e37 */
    {0x259da6542d43623du, 0x04c5112000000001u}, /* 1e38 */
    {0x2f050fe938943accu, 0x45f6556800000001u}, /* 1e39 */
    {0x3ac653e386b9497fu, 0x5773eac200000001u}, /* 1e40 */
    {0x24bbf46e3433cdefu, 0x96a872b940000001u}, /* 1e41 */
    {0x2deaf189c140c16bu, 0x7c528f6790000001u}, /* 1e42 */
    {0x3965adec3190f1c6u, 0x5b67334174000001u}, /* 1e43 */
    {0x23df8cb39efa971bu, 0xf9208008e8800001u}, /* 1e44 */
    {0x2cd76fe086b93ce2u, 0xf768a00b22a00001u}, /* 1e45 */
    {0x380d4bd8a8678c1bu, 0xb542c80deb480001u}, /* 1e46 */
    {0x23084f676940b791u, 0x5149bd08b30d0001u}, /* 1e47 */
    {0x2bca63414390e575u, 0xa59c2c4adfd04001u}, /* 1e48 */
    {0x36bcfc1194751ed3u, 0x0f03375d97c45001u}, /* 1e49 */
    {0x22361d8afcc93343u, 0xe962029a7edab201u}, /* 1e50 */
    {0x2ac3a4edbbfb8014u, 0xe3ba83411e915e81u}, /* 1e51 */
    {0x35748e292afa601au, 0x1ca924116635b621u}, /* 1e52 */
    {0x2168d8d9badc7c10u, 0x51e9b68adfe191d5u}, /* 1e53 */
    {0x29c30f1029939b14u, 0x6664242d97d9f64au}, /* 1e54 */
    {0x3433d2d433f881d9u, 0x7ffd2d38fdd073dcu}, /* 1e55 */
    {0x20a063c4a07b5127u, 0xeffe3c439ea2486au}, /* 1e56 */
    {0x28c87cb5c89a2571u, 0xebfdcb54864ada84u}, /* 1e57 */
    {0x32fa9be33ac0aeceu, 0x66fd3e29a7dd9125u}, /* 1e58 */
    {0x3fb942dc0970da82u, 0x00bc8db411d4f56eu}, /* 1e59 */
    {0x27d3c9c985e68891u, 0x4075d8908b251965u}, /* 1e60 */
    {0x31c8bc3be7602ab5u, 0x90934eb4adee5fbeu}, /* 1e61 */
    {0x3e3aeb4ae1383562u, 0xf4b82261d969f7adu}, /* 1e62 */
    {0x26e4d30eccc3215du, 0xd8f3157d27e23accu}, /* 1e63 */
    {0x309e07d27ff3e9b5u, 0x4f2fdadc71dac97fu}, /* 1e64 */
    {0x3cc589c71ff0e422u, 0xa2fbd1938e517bdfu}, /* 1e65 */
    {0x25fb761c73f68e95u, 0xa5dd62fc38f2ed6cu}, /* 1e66 */
    {0x2f7a53a390f4323bu, 0x0f54bbbb472fa8c6u}, /* 1e67 */
    {0x3b58e88c75313ec9u, 0xd329eaaa18fb92f8u}, /* 1e68 */
    {0x25179157c93ec73eu, 0x23fa32aa4f9d3bdbu}, /* 1e69 */
    {0x2e5d75adbb8e790du, 0xacf8bf54e3848ad2u}, /* 1e70 */
    {0x39f4d3192a721751u, 0x1836ef2a1c65ad86u}, /* 1e71 */
    {0x243903efba874e92u, 0xaf22557a51bf8c74u}, /* 1e72 */
    {0x2d4744eba9292237u, 0x5aeaead8e62f6f91u}, /* 1e73 */
    {0x3899162693736ac5u, 0x31a5a58f1fbb4b75u}, /* 1e74 */
    {0x235fadd81c2822bbu, 0x3f07877973d50f29u}, /* 1e75 */
    {0x2c37994e23322b6au, 0x0ec96957d0ca52f3u}, /* 1e76 */
    {0x37457fa1abfeb644u, 0x927bc3adc4fce7b0u}, /* 1e77 */
    {0x228b6fc50b7f31eau, 0xdb8d5a4c9b1e10ceu}, /* 1e78 */
    {0x2b2e4bb64e5efe65u, 0x9270b0dfc1e59502u}, /* 1e79 */
    {0x35f9dea3e1f6bdfeu, 0xf70cdd17b25efa42u}, /* 1e80 */
    {0x21bc2b266d3a36bfu, 0x5a680a2ecf7b5c69u}, /* 1e81 */
    {0x2a2b35f00888c46fu, 0x31020cba835a3384u}, /* 1e82 */
    {0x34b6036c0aaaf58au, 0xfd428fe92430c065u}, /* 1e83 */
    {0x20f1c22386aad976u, 0xde4999f1b69e783fu}, /* 1e84 */
    {0x292e32ac68558fd4u, 0x95dc006e2446164fu}, /* 1e85 */
    {0x3379bf57826af3c9u, 0xbb530089ad579be2u}, /* 1e86 */
    {0x202c1796b182d85eu, 0x1513e0560c56c16eu}, /* 1e87 */
    {0x28371d7c5de38e75u, 0x9a58d86b8f6c71c9u}, /* 1e88 */
    {0x3244e4db755c7213u, 0x00ef0e8673478e3bu}, /* 1e89 */
    {0x3ed61e1252b38e97u, 0xc12ad228101971c9u}, /* 1e90 */
    {0x2745d2cb73b0391eu, 0xd8bac3590a0fe71eu}, /* 1e91 */
    {0x3117477e509c4766u, 0x8ee9742f4c93e0e6u}, /* 1e92 */
    {0x3d5d195de4c35940u, 0x32a3d13b1fb8d91fu}, /* 1e93 */
    {0x265a2fdaaefa17c8u, 0x1fa662c4f3d387b3u}, /* 1e94 */
    {0x2ff0bbd15ab89dbau, 0x278ffb7630c869a0u}, /* 1e95 */
    {0x3beceac5b166c528u, 0xb173fa53bcfa8408u}, /* 1e96 */
    {0x257412bb8ee03b39u, 0x6ee87c74561c9285u}, /* 1e97 */
    {0x2ed1176a72984a07u, 0xcaa29b916ba3b726u}, /* 1e98 */
    {0x3a855d450f3e5c89u, 0xbd4b4275c68ca4f0u}, /* 1e99 */
    {0x24935a4b2986f9d6u, 0x164f09899c17e716u}, /* 1e100 */
    {0x2db830ddf3e8b84bu, 0x9be2cbec031de0dcu}, /* 1e101 */
    {0x39263d1570e2e65eu, 0x82db7ee703e55912u}, /* 1e102 */
    {0x23b7e62d668dcffbu, 0x11c92f50626f57acu}, /* 1e103 */
    {0x2ca5dfb8c03143f9u, 0xd63b7b247b0b2d96u}, /* 1e104 */
    {0x37cf57a6f03d94f8u, 0x4bca59ed99cdf8fcu}, /* 1e105 */
    {0x22e196c856267d1bu, 0x2f5e78348020bb9eu}, /* 1e106 */
    {0x2b99fc7a6bb01c61u, 0xfb361641a028ea85u}, /* 1e107 */
    {0x36807b99069c237au, 0x7a039bd208332526u}, /* 1e108 */
    {0x22104d3fa421962cu, 0x8c424163451ff738u}, /* 1e109 */
    {0x2a94608f8d29fbb7u, 0xaf52d1bc1667f506u}, /* 1e110 */
    {0x353978b370747aa5u, 0x9b27862b1c01f247u}, /* 1e111 */
    {0x2143eb702648cca7u, 0x80f8b3daf181376du}, /* 1e112 */
    {0x2994e64c2fdaffd1u, 0x6136e0d1ade18548u}, /* 1e113 */
    {0x33fa1fdf3bd1bfc5u, 0xb98499061959e699u}, /* 1e114 */
    {0x207c53eb856317dbu, 0x93f2dfa3cfd83020u}, /* 1e115 */
    {0x289b68e666bbddd2u, 0x78ef978cc3ce3c28u}, /* 1e116 */
    {0x32c24320006ad547u, 0x172b7d6ff4c1cb32u}, /* 1e117 */
    {0x3f72d3e800858a98u, 0xdcf65ccbf1f23dfeu}, /* 1e118 */
    {0x27a7c4710053769fu, 0x8a19f9ff773766bfu}, /* 1e119 */
    {0x3191b58d40685447u, 0x6ca0787f5505406fu}, /* 1e120 */
    {0x3df622f090826959u, 0x47c8969f2a46908au}, /* 1e121 */
    {0x26b9d5d65a5181d7u, 0xccdd5e237a6c1a57u}, /* 1e122 */
    {0x30684b4bf0e5e24du, 0xc014b5ac590720ecu}, /* 1e123 */
    {0x3c825e1eed1f5ae1u, 0x3019e3176f48e927u}, /* 1e124 */
    {0x25d17ad3543398ccu, 0xbe102deea58d91b9u}, /* 1e125 */
    {0x2f45d98829407effu, 0xed94396a4ef0f627u}, /* 1e126 */
    {0x3b174fea33909ebfu, 0xe8f947c4e2ad33b0u}, /* 1e127 */
    {0x24ee91f2603a6337u, 0xf19bccdb0dac404eu}, /* 1e128 */
    {0x2e2a366ef848fc05u, 0xee02c011d1175062u}, /* 1e129 */
    {0x39b4c40ab65b3b07u, 0x69837016455d247au}, /* 1e130 */
    {0x2410fa86b1f904e4u, 0xa1f2260deb5a36ccu}, /* 1e131 */
    {0x2d1539285e77461du, 0xca6eaf916630c47fu}, /* 1e132 */
    {0x385a8772761517a5u, 0x3d0a5b75bfbcf59fu}, /* 1e133 */
    {0x233894a789cd2ec7u, 0x4626792997d61984u}, /* 1e134 */
    {0x2c06b9d16c407a79u, 0x17b01773fdcb9fe4u}, /* 1e135 */
    {0x37086845c7509917u, 0x5d9c1d50fd3e87ddu}, /* 1e136 */
    {0x2265412b9c925faeu, 0x9a8192529e4714ebu}, /* 1e137 */
    {0x2afe917683b6f79au, 0x4121f6e745d8da25u}, /* 1e138 */
    {0x35be35d424a4b580u, 0xd16a74a1174f10aeu}, /* 1e139 */
    {0x2196e1a496e6f170u, 0x82e288e4ae916a6du}, /* 1e140 */
    {0x29fc9a0dbca0adccu, 0xa39b2b1dda35c508u}, /* 1e141 */
    {0x347bc0912bc8d93fu, 0xcc81f5e550c3364au}, /* 1e142 */
    {0x20cd585abb5d87c7u, 0xdfd139af527a01efu}, /* 1e143 */
    {0x2900ae716a34e9b9u, 0xd7c5881b2718826au}, /* 1e144 */
    {0x3340da0dc4c22428u, 0x4db6ea21f0dea304u}, /* 1e145 */
    {0x200888489af95699u, 0x30925255368b25e3u}, /* 1e146 */
    {0x280aaa5ac1b7ac3fu, 0x7cb6e6ea842def5cu}, /* 1e147 */
    {0x320d54f17225974fu, 0x5be4a0a525396b32u}, /* 1e148 */
    {0x3e90aa2dceaefd23u, 0x32ddc8ce6e87c5ffu}, /* 1e149 */
    {0x271a6a5ca12d5e35u, 0xffca9d810514dbbfu}, /* 1e150 */
    {0x30e104f3c978b5c3u, 0x7fbd44e1465a12afu}, /* 1e151 */
    {0x3d194630bbd6e334u, 0x5fac961997f0975bu}, /* 1e152 */
    {0x262fcbde75664e00u, 0xbbcbddcffef65e99u}, /* 1e153 */
    {0x2fbbbed612bfe180u, 0xeabed543feb3f63fu}, /* 1e154 */
    {0x3baaae8b976fd9e1u, 0x256e8a94fe60f3cfu}, /* 1e155 */
    {0x254aad173ea5e82cu, 0xb765169d1efc9861u}, /* 1e156 */
    {0x2e9d585d0e4f6237u, 0xe53e5c4466bbbe7au}, /* 1e157 */
    {0x3a44ae7451e33ac5u, 0xde8df355806aae18u}, /* 1e158 */
    {0x246aed08b32e04bbu, 0xab18b8157042accfu}, /* 1e159 */
    {0x2d85a84adff985eau, 0x95dee61acc535803u}, /* 1e160 */
    {0x38e7125d97f7e765u, 0x3b569fa17f682e03u}, /* 1e161 */
    {0x23906b7a7efaf09fu, 0x451623c4efa11cc2u}, /* 1e162 */
    {0x2c7486591eb9acc7u, 0x165bacb62b8963f3u}, /* 1e163 */
    {0x3791a7ef666817f8u, 0xdbf297e3b66bbcefu}, /* 1e164 */
    {0x22bb08f5a0010efbu, 0x89779eee52035616u}, /* 1e165 */
    {0x2b69cb33080152bau, 0x6bd586a9e6842b9bu}, /* 1e166 */
    {0x36443dffca01a769u, 0x06cae85460253682u}, /* 1e167 */
    {0x21eaa6bfde4108a1u, 0xa43ed134bc174211u}, /* 1e168 */
    {0x2a65506fd5d14acau, 0x0d4e8581eb1d1295u}, /* 1e169 */
    {0x34fea48bcb459d7cu, 0x90a226e265e4573bu}, /* 1e170 */
    {0x211f26d75f0b826du, 0xda65584d7faeb685u}, /* 1e171 */
    {0x2966f08d36ce6309u, 0x50feae60df9a6426u}, /* 1e172 */
    {0x33c0acb08481fbcbu, 0xa53e59f91780fd2fu}, /* 1e173 */
    {0x20586bee52d13d5fu, 0x4746f83baeb09e3eu}, /* 1e174 */
    {0x286e86e9e7858cb7u, 0x1918b64a9a5cc5cdu}, /* 1e175 */
    {0x328a28a46166efe4u, 0xdf5ee3dd40f3f740u}, /* 1e176 */
    {0x3f2cb2cd79c0abdeu, 0x17369cd49130f510u}, /* 1e177 */
    {0x277befc06c186b6au, 0xce822204dabe992au}, /* 1e178 */
    {0x315aebb0871e8645u, 0x8222aa86116e3f75u}, /* 1e179 */
    {0x3db1a69ca8e627d6u, 0xe2ab552795c9cf52u}, /* 1e180 */
    {0x268f0821e98fd8e6u, 0x4dab1538bd9e2193u}, /* 1e181 */
    {0x3032ca2a63f3cf1fu, 0xe115da86ed05a9f8u}, /* 1e182 */
    {0x3c3f7cb4fcf0c2e7u, 0xd95b5128a8471476u}, /* 1e183 */
    {0x25a7adf11e1679d0u, 0xe7d912b9692c6ccau}, /* 1e184 */
    {0x2f11996d659c1845u, 0x21cf5767c37787fcu}, /* 1e185 */
    {0x3ad5ffc8bf031e56u, 0x6a432d41b45569fbu}, /* 1e186 */
    {0x24c5bfdd7761f2f6u, 0x0269fc4910b5623du}, /* 1e187 */
    {0x2df72fd4d53a6fb3u, 0x83047b5b54e2baccu}, /* 1e188 */
    {0x3974fbca0a890ba0u, 0x63c59a322a1b697fu}, /* 1e189 */
    {0x23e91d5e4695a744u, 0x3e5b805f5a5121f0u}, /* 1e190 */
    {0x2ce364b5d83b1115u, 0x4df2607730e56a6cu}, /* 1e191 */
    {0x381c3de34e49d55au, 0xa16ef894fd1ec506u}, /* 1e192 */
    {0x2311a6ae10ee2558u, 0xa4e55b5d1e333b24u}, /* 1e193 */
    {0x2bd610599529aeaeu, 0xce1eb23465c009edu}, /* 1e194 */
    {0x36cb946ffa741a5au, 0x81a65ec17f300c68u}, /* 1e195 */
    {0x223f3cc5fc889078u, 0x9107fb38ef7e07c1u}, /* 1e196 */
    {0x2acf0bf77baab496u, 0xb549fa072b5d89b1u}, /* 1e197 */
    {0x3582cef55a9561bcu, 0x629c7888f634ec1eu}, /* 1e198 */
    {0x2171c159589d5d15u, 0xbda1cb5599e11393u}, /* 1e199 */
    {0x29ce31afaec4b45bu, 0x2d0a3e2b00595877u}, /* 1e200 */
    {0x3441be1b9a75e171u, 0xf84ccdb5c06fae95u}, /* 1e201 */
    {0x20a916d14089ace7u, 0x3b3000919845cd1du}, /* 1e202 */
    {0x28d35c8590ac1821u, 0x09fc00b5fe574065u}, /* 1e203 */
    {0x330833a6f4d71e29u, 0x4c7b00e37ded107eu}, /* 1e204 */
    {0x3fca4090b20ce5b3u, 0x9f99c11c5d68549du}, /* 1e205 */
    {0x27de685a6f480f90u, 0x43c018b1ba6134e2u}, /* 1e206 */
    {0x31d602710b1a1374u, 0x54b01ede28f9821bu}, /* 1e207 */
    {0x3e4b830d4de09851u, 0x69dc2695b337e2a1u}, /* 1e208 */
    {0x26ef31e850ac5f32u, 0xe229981d9002eda5u}, /* 1e209 */
    {0x30aafe6264d776ffu, 0x9ab3fe24f403a90eu}, /* 1e210 */
    {0x3cd5bdfafe0d54bfu, 0x8160fdae31049351u}, /* 1e211 */
    {0x260596bcdec854f7u, 0xb0dc9e8cdea2dc13u}, /* 1e212 */
    {0x2f86fc6c167a6a35u, 0x9d13c630164b9318u}, /* 1e213 */
    {0x3b68bb871c1904c3u, 0x0458b7bc1bde77ddu}, /* 1e214 */
    {0x25217534718fa2f9u, 0xe2b772d5916b0aebu}, /* 1e215 */
    {0x2e69d2818df38bb8u, 0x5b654f8af5c5cda5u}, /* 1e216 */
    {0x3a044721f1706ea6u, 0x723ea36db337410eu}, /* 1e217 */
    {0x2442ac7536e64528u, 0x07672624900288a9u}, /* 1e218 */
    {0x2d535792849fd672u, 0x0940efadb4032ad3u}, /* 1e219 */
    {0x38a82d7725c7cc0eu, 0x8b912b992103f588u}, /* 1e220 */
    {0x23691c6a779cdf89u, 0x173abb3fb4a27975u}, /* 1e221 */
    {0x2c4363851584176bu, 0x5d096a0fa1cb17d2u}, /* 1e222 */
    {0x37543c665ae51d46u, 0x344bc4938a3dddc7u}, /* 1e223 */
    {0x2294a5bff8cf324bu, 0xe0af5adc3666aa9cu}, /* 1e224 */
    {0x2b39cf2ff702fedeu, 0xd8db319344005543u}, /* 1e225 */
    {0x360842fbf4c3be96u, 0x8f11fdf815006a94u}, /* 1e226 */
    {0x21c529dd78fa571eu, 0x196b3ebb0d20429du}, /* 1e227 */
    {0x2a367454d738ece5u, 0x9fc60e69d0685344u}, /* 1e228 */
    {0x34c4116a0d07281fu, 0x07b7920444826815u}, /* 1e229 */
    {0x20fa8ae248247913u, 0x64d2bb42aad1810du}, /* 1e230 */
    {0x29392d9ada2d9758u, 0x3e076a135585e150u}, /* 1e231 */
    {0x3387790190b8fd2eu, 0x4d8944982ae759a4u}, /* 1e232 */
    {0x2034aba0fa739e3cu, 0xf075cadf1ad09807u}, /* 1e233 */
    {0x2841d689391085ccu, 0x2c933d96e184be08u}, /* 1e234 */
    {0x32524c2b8754a73fu, 0x37b80cfc99e5ed8au}, /* 1e235 */
    {0x3ee6df366929d10fu, 0x05a6103bc05f68edu}, /* 1e236 */
    {0x27504b8201ba22a9u, 0x6387ca25583ba194u}, /* 1e237 */
    {0x31245e628228ab53u, 0xbc69bcaeae4a89f9u}, /* 1e238 */
    {0x3d6d75fb22b2d628u, 0xab842bda59dd2c77u}, /* 1e239 */
    {0x266469bcf5afc5d9u, 0x6b329b68782a3bcbu}, /* 1e240 */
    {0x2ffd842c331bb74fu, 0xc5ff42429634cabdu}, /* 1e241 */
    {0x3bfce5373fe2a523u, 0xb77f12d33bc1fd6du}, /* 1e242 */
    {0x257e0f4287eda736u, 0x52af6bc405593e64u}, /* 1e243 */
    {0x2edd931329e91103u, 0xe75b46b506af8dfdu}, /* 1e244 */
    {0x3a94f7d7f4635544u, 0xe1321862485b717cu}, /* 1e245 */
    {0x249d1ae6f8be154bu, 0x0cbf4f3d6d3926eeu}, /* 1e246 */
    {0x2dc461a0b6ed9a9du, 0xcfef230cc88770a9u}, /* 1e247 */
    {0x39357a08e4a90145u, 0x43eaebcffaa94cd3u}, /* 1e248 */
    {0x23c16c458ee9a0cbu, 0x4a72d361fca9d004u}, /* 1e249 */
    {0x2cb1c756f2a408feu, 0x1d0f883a7bd44405u}, /* 1e250 */
    {0x37de392caf4d0b3du, 0xa4536a491ac95506u}, /* 1e251 */
    {0x22eae3bbed902706u, 0x86b4226db0bdd524u}, /* 1e252 */
    {0x2ba59caae8f430c8u, 0x28612b091ced4a6du}, /* 1e253 */
    {0x368f03d5a3313cfau, 0x327975cb64289d08u}, /* 1e254 */
    {0x2219626585fec61cu, 0x5f8be99f1e996225u}, /* 1e255 */
    {0x2a9fbafee77e77a3u, 0x776ee406e63fbaaeu}, /* 1e256 */
    {0x3547a9bea15e158cu, 0x554a9d089fcfa95au}, /* 1e257 */
    {0x214cca1724dacd77u, 0xb54ea22563e1c9d8u}, /* 1e258 */
    {0x299ffc9cee1180d5u, 0xa2a24aaebcda3c4eu}, /* 1e259 */
    {0x3407fbc42995e10bu, 0x0b4add5a6c10cb62u}, /* 1e260 */
    {0x2084fd5a99fdaca6u, 0xe70eca58838a7f1du}, /* 1e261 */
    {0x28a63cb1407d17d0u, 0xa0d27ceea46d1ee4u}, /* 1e262 */
    {0x32cfcbdd909c5dc4u, 0xc9071c2a4d88669du}, /* 1e263 */
    {0x3f83bed4f4c37535u, 0xfb48e334e0ea8045u}, /* 1e264 */
    {0x27b2574518fa2941u, 0xbd0d8e010c92902bu}, /* 1e265 */
    {0x319eed165f38b392u, 0x2c50f1814fb73436u}, /* 1e266 */
    {0x3e06a85bf706e076u, 0xb7652de1a3a50143u}, /* 1e267 */
    {0x26c429397a644c4au, 0x329f3cad064720cau}, /* 1e268 */
    {0x30753387d8fd5f5cu, 0xbf470bd847d8e8fdu}, /* 1e269 */
    {0x3c928069cf3cb733u, 0xef18cece59cf233cu}, /* 1e270 */
    {0x25db90422185f280u, 0x756f8140f8217605u}, /* 1e271 */
    {0x2f527452a9e76f20u, 0x92cb61913629d387u}, /* 1e272 */
    {0x3b27116754614ae8u, 0xb77e39f583b44868u}, /* 1e273 */
    {0x24f86ae094bcced1u, 0x72aee4397250ad41u}, /* 1e274 */
    {0x2e368598b9ec0285u, 0xcf5a9d47cee4d891u}, /* 1e275 */
    {0x39c426fee8670327u, 0x43314499c29e0eb6u}, /* 1e276 */
    {0x241a985f514061f8u, 0x89fecae019a2c932u}, /* 1e277 */
    {0x2d213e7725907a76u, 0xac7e7d98200b7b7eu}, /* 1e278 */
    {0x38698e14eef49914u, 0x579e1cfe280e5a5du}, /* 1e279 */
    {0x2341f8cd1558dfacu, 0xb6c2d21ed908f87bu}, /* 1e280 */
    {0x2c1277005aaf1797u, 0xe47386a68f4b3699u}, /* 1e281 */
    {0x371714c0715add7du, 0xdd906850331e043fu}, /* 1e282 */
    {0x226e6cf846d8ca6eu, 0xaa7a41321ff2c2a8u}, /* 1e283 */
    {0x2b0a0836588efd0au, 0x5518d17ea7ef7352u}, /* 1e284 */
    {0x35cc8a43eeb2bc4cu, 0xea5f05de51eb5026u}, /* 1e285 */
    {0x219fd66a752fb5b0u, 0x127b63aaf3331218u}, /* 1e286 */
    {0x2a07cc05127ba31cu, 0x171a3c95afffd69eu}, /* 1e287 */
    {0x3489bf06571a8be3u, 0x1ce0cbbb1bffcc45u}, /* 1e288 */
    {0x20d61763f670976du, 0xf20c7f54f17fdfabu}, /* 1e289 */
    {0x290b9d3cf40cbd49u, 0x6e8f9f2a2ddfd796u}, /* 1e290 */
    {0x334e848c310fec9bu, 0xca3386f4b957cd7bu}, /* 1e291 */
    {0x201112d79ea9f3e1u, 0x5e603458f3d6e06du}, /* 1e292 */
    {0x2815578d865470d9u, 0xb5f8416f30cc9888u}, /* 1e293 */
    {0x321aad70e7e98d10u, 0x237651cafcffbeaau}, /* 1e294 */
    {0x3ea158cd21e3f054u, 0x2c53e63dbc3fae55u}, /* 1e295 */
    {0x2724d780352e7634u, 0x9bb46fe695a7ccf5u}, /* 1e296 */
    {0x30ee0d60427a13c1u, 0xc2a18be03b11c033u}, /* 1e297 */
    {0x3d2990b8531898b2u, 0x3349eed849d6303fu}, /* 1e298 */
    {0x2639fa7333ef5f6fu, 0x600e35472e25de28u}, /* 1e299 */
    {0x2fc8791000eb374bu, 0x3811c298f9af55b1u}, /* 1e300 */
    {0x3bba97540126051eu, 0x0616333f381b2b1eu}, /* 1e301 */
    {0x25549e9480b7c332u, 0xc3cde0078310faf3u}, /* 1e302 */
    {0x2ea9c639a0e5b3ffu, 0x74c1580963d539afu}, /* 1e303 */
    {0x3a5437c8091f20ffu, 0x51f1ae0bbcca881bu}, /* 1e304 */
    {0x2474a2dd05b3749fu, 0x93370cc755fe9511u}, /* 1e305 */
    {0x2d91cb94472051c7u, 0x7804cff92b7e3a55u}, /* 1e306 */
    {0x38f63e7958e86639u, 0x560603f7765dc8eau}, /* 1e307 */
    {0x2399e70bd7913fe3u, 0xd5c3c27aa9fa9d93u}, /* 1e308 */
    {0x2c8060cecd758fdcu, 0xcb34b319547944f7u}, /* 1e309 */
    {0x37a0790280d2f3d3u, 0xfe01dfdfa9979635u}, /* 1e310 */
    {0x22c44ba19083d864u, 0x7ec12bebc9febde1u}, /* 1e311 */
    {0x2b755e89f4a4ce7du, 0x9e7176e6bc7e6d59u}, /* 1e312 */
    {0x3652b62c71ce021du, 0x060dd4a06b9e08b0u}, /* 1e313 */
    {0x21f3b1dbc720c152u, 0x23c8a4e44342c56eu}, /* 1e314 */
    {0x2a709e52b8e8f1a6u, 0xacbace1d541376c9u}, /* 1e315 */
    {0x350cc5e767232e10u, 0x57e981a4a918547bu}, /* 1e316 */
    {0x2127fbb0a075fccau, 0x36f1f106e9af34cdu}, /* 1e317 */
    {0x2971fa9cc8937bfcu, 0xc4ae6d48a41b0201u}, /* 1e318 */
    {0x33ce7943fab85afbu, 0xf5da089acd21c281u}, /* 1e319 */
    {0x20610bca7cb338ddu, 0x79a84560c0351991u}, /* 1e320 */
    {0x28794ebd1be00714u, 0xd81256b8f0425ff5u}, /* 1e321 */
    {0x3297a26c62d808dau, 0x0e16ec672c52f7f2u}, /* 1e322 */
    {0x3f3d8b077b8e0b10u, 0x919ca780f767b5eeu}, /* 1e323 */
    {0x278676e4ad38c6eau, 0x5b01e8b09aa0d1b5u}, /* 1e324 */
};

/* floor(q * log10 2), floor(q * log10 2 + log10 3/4) and floor(e * log2 10) as fixed-point
 * products; checked exactly for |q|, |e| < 1100 and 400 (far beyond the ranges used). Right
 * shifts of negative ints are arithmetic on every compiler we support (gcc, clang). */
static inline int floor_log10_pow2(int q) { return (q * 1262611) >> 22; }
static inline int floor_log10_three_quarters_pow2(int q) { return (q * 1262611 - 524031) >> 22; }
static inline int floor_log2_pow10(int e) { return (e * 1741647) >> 19; }

/* g * cp / 2^127 rounded to odd: the floor, with its lowest bit forced to 1 when the exact
 * scaled value (10^-k in place of g) is not an integer, so one integer carries both the value
 * and "exactly on a boundary or not". g overshoots by less than one unit and cp < 2^60, so the
 * excess stays below 2^64 in the product: the low 64 bits are noise and only bits 64..126
 * decide exactness (a true fraction is never that small, per the paper's analysis). */
static inline uint64_t mul_round_odd(pow10_u128 g, uint64_t cp) {
  dtoa_u128 low = (dtoa_u128)g.lo * cp;
  dtoa_u128 high = (dtoa_u128)g.hi * cp + (uint64_t)(low >> 64); /* floor(product / 2^64) */
  uint64_t quot = (uint64_t)(high >> 63);
  uint64_t frac = (uint64_t)high << 1; /* bits 64..126 of the product */
  return quot | (frac != 0);
}

/* v = c * 2^q with c >= 1. Returns f and sets *e10 so that f * 10^e10 is the shortest decimal
 * in v's rounding interval that is closest to v (f may still end in zeros). */
static uint64_t schubfach(uint64_t c, int q, int *e10) {
  /* Work in quarter units: v = cb * 2^(q-2); the interval bounds are the midpoints to the
   * neighbours. Below a power of two (c minimal, not the smallest exponent) the lower
   * neighbour is only half as far away. */
  uint64_t cb = c << 2, cbr = cb + 2, cbl;
  int k;
  if (c == HIDDEN_BIT && q > Q_MIN) {
    cbl = cb - 1;
    k = floor_log10_three_quarters_pow2(q);
  } else {
    cbl = cb - 2;
    k = floor_log10_pow2(q);
  }
  /* h in [2, 5]: aligns cb * 2^q * 10^-k so that the result keeps two fraction bits. */
  int h = q + floor_log2_pow10(-k) + 2;
  pow10_u128 g = pow10_table[-k - POW_MIN];
  uint64_t vb = mul_round_odd(g, cb << h);
  uint64_t vbl = mul_round_odd(g, cbl << h);
  uint64_t vbr = mul_round_odd(g, cbr << h);
  /* Round-half-even in binary: the bounds belong to the interval only when c is even. */
  uint64_t odd = c & 1, lo_lim = vbl + odd, hi_lim = vbr - odd;

  *e10 = k;
  uint64_t s = vb >> 2; /* floor(v * 10^-k) */
  /* The interval is narrower than 10^(k+1), so at most one multiple of ten units fits: if it
   * does, it is the unique shortest candidate. */
  uint64_t s10 = s / 10 * 10, t10 = s10 + 10;
  int s10_in = lo_lim <= s10 << 2, t10_in = t10 << 2 <= hi_lim;
  if (s10_in != t10_in) return s10_in ? s10 : t10;
  /* Otherwise s or s + 1 (same length, one of them always fits): the one closest to v, and
   * on an exact tie the even one (ECMAScript Number::toString, V8). */
  uint64_t t = s + 1;
  int s_in = lo_lim <= s << 2, t_in = t << 2 <= hi_lim;
  if (s_in != t_in) return s_in ? s : t;
  uint64_t mid = (s << 2) + 2; /* 4 * (s + 1/2) */
  if (vb < mid || (vb == mid && (s & 1) == 0)) return s;
  return t;
}

/* "00" "01" ... "99": two digits per division by 100. */
static const char digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[18] = {
    UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000), UINT64_C(100000),
    UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000), UINT64_C(1000000000),
    UINT64_C(10000000000), UINT64_C(100000000000), UINT64_C(1000000000000),
    UINT64_C(10000000000000), UINT64_C(100000000000000), UINT64_C(1000000000000000),
    UINT64_C(10000000000000000), UINT64_C(100000000000000000)};

/* Number of decimal digits of 1 <= f < 10^17 (1233/4096 ~ log10 2). */
static inline int decimal_length(uint64_t f) {
  int bits = 64 - __builtin_clzll(f);
  int t = (bits * 1233) >> 12;
  return t + 1 - (f < pow10_u64[t]);
}

/* Writes x < 10^8 as exactly 8 digits. The four pairs do not depend on each other, so the
 * divisions overlap instead of forming one long chain. */
static inline void write_8_digits(char *p, uint32_t x) {
  uint32_t hi = x / 10000, lo = x - hi * 10000;
  uint32_t a = hi / 100, b = hi - a * 100, c = lo / 100, d = lo - c * 100;
  memcpy(p, digit_pairs + 2 * a, 2);
  memcpy(p + 2, digit_pairs + 2 * b, 2);
  memcpy(p + 4, digit_pairs + 2 * c, 2);
  memcpy(p + 6, digit_pairs + 2 * d, 2);
}

/* Shortest digits of a finite v > 0. Writes f as 17 zero-padded digits into field; the k
 * significant digits start at field + *first, and v == 0.digits x 10^n. Returns k. */
static inline int shortest_in_field(char field[17], int *first, int *n, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  uint64_t frac = bits & FRAC_MASK;
  int biased = (int)((bits >> FRAC_BITS) & 0x7ff);
  uint64_t c = biased ? frac | HIDDEN_BIT : frac;
  int q = biased ? biased - EXP_BIAS_SHIFT : Q_MIN;

  uint64_t f;
  int e10;
  if (q <= 0 && q >= -FRAC_BITS && (c & ((UINT64_C(1) << -q) - 1)) == 0) {
    /* A whole number below 2^53: the rounding interval is at most +-1/2 wide, so the integer
     * itself (trailing zeros dropped below) is the unique shortest candidate. */
    f = c >> -q;
    e10 = 0;
  } else {
    f = schubfach(c, q, &e10);
  }

  /* f < 10^17 (s <= v * 10^-k < 10 * 2^53): one digit, then two blocks of eight. */
  uint64_t top = f / 100000000;
  uint32_t lead = (uint32_t)(top / 100000000);
  field[0] = (char)('0' + lead);
  write_8_digits(field + 1, (uint32_t)(top - (uint64_t)lead * 100000000));
  write_8_digits(field + 9, (uint32_t)(f - top * 100000000));

  int len = decimal_length(f);
  int end = 17;
  while (field[end - 1] == '0') end--;
  *first = 17 - len;
  *n = e10 + len;
  return end - *first;
}

int adcp_dtoa_shortest(char digits[17], int *n, double v) {
  char field[17];
  int first;
  int k = shortest_in_field(field, &first, n, v);
  memcpy(digits, field + first, (size_t)k);
  return k;
}

size_t adcp_json_layout_number(char *out, int negative, const char *digits, int k, int n) {
  char *p = out;
  if (negative) *p++ = '-';
  if (k <= n && n <= 21) {
    /* Integer: digits then n - k zeros. */
    memcpy(p, digits, (size_t)k);
    p += k;
    memset(p, '0', (size_t)(n - k));
    p += n - k;
  } else if (0 < n && n <= 21) {
    /* Point inside the digits. */
    memcpy(p, digits, (size_t)n);
    p += n;
    *p++ = '.';
    memcpy(p, digits + n, (size_t)(k - n));
    p += k - n;
  } else if (-6 < n && n <= 0) {
    /* 0.000ddd */
    *p++ = '0';
    *p++ = '.';
    memset(p, '0', (size_t)-n);
    p += -n;
    memcpy(p, digits, (size_t)k);
    p += k;
  } else {
    /* d.ddde±x; the exponent sign is always written. */
    *p++ = digits[0];
    if (k > 1) {
      *p++ = '.';
      memcpy(p, digits + 1, (size_t)(k - 1));
      p += k - 1;
    }
    *p++ = 'e';
    long long e = (long long)n - 1;
    *p++ = e < 0 ? '-' : '+';
    unsigned long long m = (unsigned long long)(e < 0 ? -e : e);
    char tmp[20];
    int w = 0;
    do {
      tmp[w++] = (char)('0' + m % 10);
      m /= 10;
    } while (m);
    while (w) *p++ = tmp[--w];
  }
  return (size_t)(p - out);
}

size_t adcp_json_format_double(char *out, double v) {
  if (v == 0) { /* +0 and -0 */
    out[0] = '0';
    return 1;
  }
  int negative = v < 0;
  char field[17];
  int first, n;
  int k = shortest_in_field(field, &first, &n, negative ? -v : v);
  return adcp_json_layout_number(out, negative, field + first, k, n);
}
